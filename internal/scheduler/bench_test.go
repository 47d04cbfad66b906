package scheduler

import (
	"fmt"
	"testing"

	"github.com/strata-dev/strata/api"
)

// syntheticCell is n nodes of three shapes over 40 racks and 4 zones; every
// fourth node has 8 GPUs (A100 or V100) and every node has two NUMA nodes.
func syntheticCell(n int) *fakeState {
	return newFake(nodesN(n, func(i int, b *nodeBuilder) {
		cores := 32 + 32*(i%3)
		b.cpu(int64(cores) * 1000).mem(fmt.Sprintf("%dGi", 128+128*(i%3))).disk("2Ti").net(25000)
		b.label("rack", fmt.Sprintf("r%d", i%40)).label("zone", fmt.Sprintf("z%d", i%4))
		b.numa(0, "", cpus(0, cores/2)...).numa(1, "", cpus(cores/2, cores)...)
		if i%4 == 0 {
			model := []string{"A100", "V100"}[i/4%2]
			for g := range 8 {
				b.gpu(fmt.Sprint(g), model, g/4)
			}
		}
	})...)
}

// benchWorkload is 10 groups × replicas of mixed shapes, some constrained.
func benchWorkload(replicas int) *api.Workload {
	return workload("bench",
		taskGroup("web").replicas(replicas).cpu(500).mem("1Gi"),
		taskGroup("api").replicas(replicas).cpu(1000).mem("2Gi").prefer(50, "zone", "=", "z1"),
		taskGroup("cache").replicas(replicas).cpu(250).mem("4Gi").require("zone", "in", "z0", "z1", "z2"),
		taskGroup("db").replicas(replicas).cpu(2000).mem("8Gi").exclusive(),
		taskGroup("batch").replicas(replicas).cpu(1500).mem("3Gi").avoid(30, "rack", "in", "r0", "r1"),
		taskGroup("ml").replicas(replicas/4).cpu(4000).mem("16Gi").gpus(1).models("A100"),
		taskGroup("infer").replicas(replicas).cpu(200).mem("512Mi").gpuMilli(250),
		taskGroup("log").replicas(replicas).cpu(100).mem("256Mi").disk("10Gi").net(100),
		taskGroup("queue").replicas(replicas).cpu(750).mem("1Gi").require("rack", "notin", "r0", "r1", "r2"),
		taskGroup("etl").replicas(replicas).cpu(1000).mem("2Gi").exclusive().require("zone", "!=", "z3"),
	)
}

func BenchmarkSchedule10kTasks1kNodes(b *testing.B) { benchSchedule(b, 1000) }

// BenchmarkSchedule10kTasks10kNodes is the same workload on the cell size
// the 50,000 placements/s target is set for.
func BenchmarkSchedule10kTasks10kNodes(b *testing.B) { benchSchedule(b, 10000) }

func benchSchedule(b *testing.B, nodes int) {
	f := syntheticCell(nodes)
	f.putWorkload(benchWorkload(1000))
	eval := &api.Evaluation{ID: "bench", Workload: "bench"}
	placed := 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		plan := Schedule(f, eval, Options{Seed: int64(i)})
		if len(plan.Failures) > 0 {
			b.Fatalf("bench workload does not fit: %s: %s", plan.Failures[0].Group, plan.Failures[0].Summary)
		}
		for _, as := range plan.Place {
			placed += len(as)
		}
	}
	b.ReportMetric(float64(placed)/b.Elapsed().Seconds(), "placements/s")
	b.ReportMetric(float64(placed)/float64(b.N), "placements/op")
}

func BenchmarkCheckNode(b *testing.B) {
	n := syntheticCell(1).nodes[0]
	var existing, place []*api.Allocation
	for i := range 20 {
		existing = append(existing, runningOn(fmt.Sprint("e", i), n.ID, api.Resources{CPUMilli: 500, MemoryBytes: 1 << 30}, api.Assignment{NUMANode: -1}))
	}
	for i := range 8 {
		a := runningOn(fmt.Sprint("p", i), n.ID, api.Resources{CPUMilli: 2000, MemoryBytes: 1 << 30, GPUs: 1},
			api.Assignment{CPUs: []int{2 * i, 2*i + 1}, NUMANode: 0, GPUs: []string{fmt.Sprint(i)}})
		a.TaskGroup = taskGroup("g").exclusive().g
		place = append(place, a)
	}
	stopping := map[string]bool{"e0": true}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if ok, reason := CheckNode(n, existing, stopping, place); !ok {
			b.Fatal(reason)
		}
	}
}

// BenchmarkGang10kNodes places 20 gangs of 64 one-GPU members that keep to
// a rack, on the 10k-node synthetic cell (a rack holds 62 GPU nodes).
func BenchmarkGang10kNodes(b *testing.B) {
	f := syntheticCell(10000)
	var groups []*groupBuilder
	for k := range 20 {
		groups = append(groups, taskGroup(fmt.Sprint("train", k)).replicas(64).cpu(4000).mem("16Gi").gpus(1).gang(0, "rack"))
	}
	f.putWorkload(workload("gangs", groups...))
	benchPlans(b, f, "gangs", true)
}

// BenchmarkGangDoesNotFit is the failure path: a gang of 3000 eight-GPU
// members tries every rack and zone and the whole cell, twice (without and
// with preemption), before it reports that it does not fit.
func BenchmarkGangDoesNotFit(b *testing.B) {
	f := syntheticCell(10000)
	f.putWorkload(workload("huge", taskGroup("train").replicas(3000).cpu(1000).mem("1Gi").gpus(8).gang(0, "rack")))
	benchPlans(b, f, "huge", false)
}

// BenchmarkPreempt1kNodes fills 1k nodes with best-effort work (4
// allocations each) and places 1000 replicas that each need one eviction.
func BenchmarkPreempt1kNodes(b *testing.B) {
	f := newFake(nodesN(1000, nil)...)
	for _, n := range f.nodes {
		for k := range 4 {
			a := runningOn(fmt.Sprintf("%s-%d", n.ID, k), n.ID, api.Resources{CPUMilli: 1000, MemoryBytes: 1 << 30}, api.Assignment{NUMANode: -1})
			a.Workload, a.Group, a.Priority = "filler", "g", 10+k
			f.allocs = append(f.allocs, a) // ids sort as generated
		}
		n.Allocated = api.Resources{CPUMilli: 4000, MemoryBytes: 4 << 30}
	}
	f.putWorkload(workload("prod", taskGroup("web").replicas(1000).cpu(1000).mem("1Gi")))
	benchPlans(b, f, "prod", true)
}

func benchPlans(b *testing.B, f *fakeState, name string, mustFit bool) {
	eval := &api.Evaluation{ID: "bench", Workload: name}
	placed, preempted := 0, 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		plan := Schedule(f, eval, Options{Seed: int64(i)})
		if mustFit && len(plan.Failures) > 0 {
			b.Fatalf("%s does not fit: %s: %s", name, plan.Failures[0].Group, plan.Failures[0].Summary)
		}
		if !mustFit && len(plan.Failures) == 0 {
			b.Fatalf("%s fits", name)
		}
		for _, as := range plan.Place {
			placed += len(as)
		}
		preempted += plan.Preemptions
	}
	b.ReportMetric(float64(placed)/float64(b.N), "placements/op")
	b.ReportMetric(float64(preempted)/float64(b.N), "preemptions/op")
}
