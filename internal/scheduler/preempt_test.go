package scheduler

import (
	"fmt"
	"slices"
	"testing"

	"github.com/strata-dev/strata/api"
)

// running adds a running allocation of workload wl at priority prio.
func running(f *fakeState, id, nodeID, wl string, prio int, cpu int64) *api.Allocation {
	a := runningOn(id, nodeID, api.Resources{CPUMilli: cpu, MemoryBytes: 1 << 30}, api.Assignment{NUMANode: -1})
	a.Workload, a.Group, a.Priority = wl, "g", prio
	f.putAlloc(a)
	return a
}

// preemptedBy lists a plan's victims as "allocID:preemptorID", sorted.
func preempted(p *api.Plan) map[string]api.StopRequest {
	out := map[string]api.StopRequest{}
	for _, ss := range p.Stop {
		for _, s := range ss {
			if s.PreemptedBy != "" {
				out[s.AllocID] = s
			}
		}
	}
	return out
}

func TestPreemptionChoosesCheapestVictims(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(f *fakeState)
		cpu     int64
		victims string // sorted victim ids, "" = no preemption
		own     bool   // the running allocations are the workload's own group g
	}{
		{"fewest victims", func(f *fakeState) {
			for _, id := range []string{"a1", "a2", "a3", "a4"} {
				running(f, id, "n000", "low", 10, 1000)
			}
			running(f, "b1", "n001", "low", 20, 3000)
			running(f, "b2", "n001", "low", 10, 1000)
		}, 3000, "b1", false},
		{"lowest priority among equal counts", func(f *fakeState) {
			running(f, "a1", "n000", "low", 30, 4000)
			running(f, "b1", "n001", "low", 10, 4000)
		}, 2000, "b1", false},
		{"least work lost among equal priorities", func(f *fakeState) {
			running(f, "a1", "n000", "low", 10, 4000)
			running(f, "b1", "n001", "low", 10, 2500)
			running(f, "b2", "n001", "low", 40, 1500)
		}, 2000, "b1", false},
		{"two victims when no single one frees enough", func(f *fakeState) {
			running(f, "a1", "n000", "low", 10, 2000)
			running(f, "a2", "n000", "low", 10, 1000)
			running(f, "a3", "n000", "low", 10, 1000)
			running(f, "b1", "n001", "high", 90, 4000)
		}, 3000, "a1,a2", false},
		{"never equal or higher priority", func(f *fakeState) {
			running(f, "a1", "n000", "peer", 50, 4000)
			running(f, "b1", "n001", "high", 60, 4000)
		}, 1000, "", false},
		{"not when the lower ones do not free enough", func(f *fakeState) {
			running(f, "a1", "n000", "low", 10, 2000)
			running(f, "a2", "n000", "high", 90, 2000)
			running(f, "b1", "n001", "low", 10, 1000)
			running(f, "b2", "n001", "high", 90, 3000)
		}, 3000, "", false},
		{"never the same workload", func(f *fakeState) {
			running(f, "a1", "n000", "w", 10, 4000)
			running(f, "b1", "n001", "w", 10, 4000).Index = 1
		}, 1000, "", true},
		{"free room first", func(f *fakeState) {
			running(f, "a1", "n000", "low", 10, 4000)
			running(f, "b1", "n001", "low", 10, 1000)
		}, 3000, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(nodesN(2, nil)...)
			tt.setup(f)
			w := workload("w", taskGroup("big").cpu(tt.cpu))
			if tt.own {
				own := taskGroup("g").replicas(2).cpu(4000).mem("1Gi")
				w.Groups = append(w.Groups, own.g)
				for _, a := range f.allocs {
					a.WorkloadVersion, a.TaskGroup = w.Version, own.g
				}
			}
			f.putWorkload(w)
			plan := schedule(f, "w", 1)
			got := preempted(plan)
			var ids []string
			for _, s := range planStops(plan) {
				id, _, _ := cut(s)
				ids = append(ids, id)
			}
			mustEqual(t, "victims", join(ids), tt.victims)
			mustEqual(t, "preemptions", plan.Preemptions, len(got))
			placed := planAllocs(plan)
			if tt.victims == "" {
				mustEqual(t, "placed without victims", len(placed), map[bool]int{true: 1}[tt.name == "free room first"])
				return
			}
			mustEqual(t, "placed", len(placed), 1)
			for id, s := range got {
				mustEqual(t, id+" preempted by", s.PreemptedBy, placed[0].ID)
				mustEqual(t, id+" reason", s.Reason, "preempted by w/big[0] (priority 50)")
				mustEqual(t, id+" on the preemptor's node", f.alloc(id).NodeID, placed[0].NodeID)
			}
			checkAndApply(t, f, plan)
		})
	}
}

// checkAndApply runs CheckNode on every node of the plan, as the plan
// applier does, applies it and checks that nothing is overcommitted.
func checkAndApply(t *testing.T, f *fakeState, plan *api.Plan) {
	t.Helper()
	for nodeID, place := range plan.Place {
		stopping := map[string]bool{}
		for _, s := range plan.Stop[nodeID] {
			stopping[s.AllocID] = true
		}
		ok, reason := CheckNode(f.Node(nodeID), f.AllocsByNode(nodeID), stopping, place)
		mustEqual(t, "CheckNode "+nodeID, reason, "")
		mustEqual(t, "CheckNode ok", ok, true)
	}
	f.apply(plan, false)
	for _, n := range f.nodes {
		if dim := n.Allocated.Exceeds(n.Capacity); dim != "" {
			t.Fatalf("node %s overcommitted in %s", n.ID, dim)
		}
	}
}

func TestPreemptionFreesCoresAndGPUs(t *testing.T) {
	f := newFake(gpuBox())
	// The victim holds NUMA 0 (cores 0-7, its A100s); a pinned neighbour of
	// higher priority holds NUMA 1's cores.
	v := runningOn("v", "n1", api.Resources{CPUMilli: 8000, MemoryBytes: 8 << 30, GPUs: 2}, api.Assignment{CPUs: cpus(0, 8), NUMANode: 0, GPUs: []string{"0", "1"}})
	v.Workload, v.Priority, v.TaskGroup = "low", 10, taskGroup("g").exclusive().g
	f.putAlloc(v)
	h := runningOn("h", "n1", api.Resources{CPUMilli: 8000, MemoryBytes: 8 << 30}, api.Assignment{CPUs: cpus(8, 16), NUMANode: 1})
	h.Workload, h.Priority, h.TaskGroup = "high", 90, taskGroup("g").exclusive().g
	f.putAlloc(h)

	f.putWorkload(workload("w", taskGroup("train").cpu(4000).mem("4Gi").exclusive().gpus(2).models("A100")))
	plan := schedule(f, "w", 1)
	mustEqual(t, "failures", len(plan.Failures), 0)
	mustEqual(t, "victims", join(planStops(plan)), "v:preempted by w/train[0] (priority 50)")
	a := planAllocs(plan)[0]
	mustEqual(t, "numa", a.Assignment.NUMANode, 0)
	mustEqual(t, "cores", join(intsToStrings(a.Assignment.CPUs)), "0,1,2,3")
	mustEqual(t, "gpus", join(a.Assignment.GPUs), "0,1")
	checkAndApply(t, f, plan)
	mustEqual(t, "victim released", f.alloc("v").Terminal(), true)
}

func TestGangPreemptsAsAUnit(t *testing.T) {
	for _, tt := range []struct {
		name      string
		thirdPrio int
		want      int // preemptions
	}{{"all members find victims", 10, 3}, {"one member cannot: none preempt", 90, 0}} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(nodesN(3, nil)...)
			running(f, "a", "n000", "low", 10, 4000)
			running(f, "b", "n001", "low", 10, 4000)
			running(f, "c", "n002", "other", tt.thirdPrio, 4000)
			f.putWorkload(workload("w", taskGroup("train").replicas(3).cpu(3000).gang(0, "")))
			plan := schedule(f, "w", 1)
			mustEqual(t, "preemptions", plan.Preemptions, tt.want)
			mustEqual(t, "stops", len(planStops(plan)), tt.want)
			mustEqual(t, "placed", len(planAllocs(plan)), tt.want)
			if tt.want == 0 {
				mustEqual(t, "summary", plan.Failures[0].Summary, "gang of 3 does not fit: the whole cell holds 2; 3 nodes: insufficient cpu")
				return
			}
			checkAndApply(t, f, plan)
		})
	}
}

func TestPreemptionDeterminism(t *testing.T) {
	run := func() string {
		f := newFake(nodesN(20, nil)...)
		for i, n := range f.nodes {
			running(f, "low-"+n.ID, n.ID, "low", i%7, 1000+int64(i%3)*1000)
			running(f, "high-"+n.ID, n.ID, "high", 90, 2000)
		}
		f.putWorkload(workload("w", taskGroup("g").replicas(15).cpu(2000)))
		return planJSON(t, schedule(f, "w", 4))
	}
	a := run()
	mustEqual(t, "same plan", run(), a)
}

func TestCheckNodeAcceptsPreemption(t *testing.T) {
	f := newFake(nodesN(1, nil)...)
	running(f, "v", "n000", "low", 10, 4000)
	f.putWorkload(workload("w", taskGroup("g").cpu(4000)))
	plan := schedule(f, "w", 1)
	mustEqual(t, "preemptions", plan.Preemptions, 1)
	place := plan.Place["n000"]
	ok, reason := CheckNode(f.Node("n000"), f.AllocsByNode("n000"), map[string]bool{"v": true}, place)
	mustEqual(t, "with the victim stopping", reason, "")
	mustEqual(t, "ok", ok, true)
	ok, reason = CheckNode(f.Node("n000"), f.AllocsByNode("n000"), nil, place)
	mustEqual(t, "without the plan's stop", reason, "insufficient cpu")
	mustEqual(t, "rejected", ok, false)
}

func TestPreemptingAGangMemberEvictsItsGang(t *testing.T) {
	f := newFake(nodesN(3, nil)...)
	gang := taskGroup("train").replicas(2).gang(0, "").g
	for k, nodeID := range []string{"n000", "n001"} {
		a := running(f, fmt.Sprint("m", k), nodeID, "batch", 10, 4000)
		a.Group, a.Index, a.TaskGroup = "train", k, gang
	}
	running(f, "solo", "n002", "other", 20, 4000)
	f.putWorkload(workload("w", taskGroup("web").cpu(1000)))
	plan := schedule(f, "w", 1)
	// One lone victim of priority 20 beats a gang of two at priority 10.
	mustEqual(t, "victims", join(planStops(plan)), "solo:preempted by w/web[0] (priority 50)")

	f = newFake(nodesN(2, nil)...)
	for k, nodeID := range []string{"n000", "n001"} {
		a := running(f, fmt.Sprint("m", k), nodeID, "batch", 10, 4000)
		a.Group, a.Index, a.TaskGroup = "train", k, gang
	}
	f.putWorkload(workload("w", taskGroup("web").cpu(1000)))
	plan = schedule(f, "w", 1)
	mustEqual(t, "the whole gang goes", join(planStops(plan)), "m0:preempted by w/web[0] (priority 50),m1:preempted by w/web[0] (priority 50)")
	mustEqual(t, "preemptions", plan.Preemptions, 2)
	checkAndApply(t, f, plan)
}

// TestFitsWithoutLeavesTheNodeAlone: asking whether a replica fits without
// some victims answers on a copy of the node's state; the node's free
// resources and its occupancy detail are what they were.
func TestFitsWithoutLeavesTheNodeAlone(t *testing.T) {
	f := newFake(node("n1").cpu(4000).mem("8Gi").numa(0, "", cpus(0, 4)...))
	v := runningOn("v", "n1", api.Resources{CPUMilli: 3000, MemoryBytes: 1 << 30}, api.Assignment{CPUs: []int{0, 1, 2}, NUMANode: 0})
	v.Workload, v.Group, v.Priority = "low", "g", 10
	f.putAlloc(v)
	hi := workload("hi", taskGroup("g").cpu(2000).mem("1Gi").exclusive())
	hi.Priority = 90
	f.putWorkload(hi)
	c := newCell(f, 1)
	g := compileGroup(hi, hi.Groups[0], Options{})
	pr := newPreemptor(&placer{cell: c, w: hi}, g, c.order)

	n, d := c.at(0), c.detail(0)
	free, taken := n.free, slices.Clone(d.coreTaken)
	mustEqual(t, "fits as is", g.check(c, 0), "insufficient cpu")
	mustEqual(t, "fits without v", pr.fitsWithout(0, []*api.Allocation{v}), true)
	mustEqual(t, "free unchanged", c.at(0).free, free)
	mustEqual(t, "same detail", c.at(0).detail, d)
	mustEqual(t, "cores unchanged", slices.Equal(d.coreTaken, taken), true)
	mustEqual(t, "still does not fit", g.check(c, 0), "insufficient cpu")
}
