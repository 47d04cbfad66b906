package scheduler

import (
	"slices"
	"testing"

	"github.com/strata-dev/strata/api"
)

// gpuBox is a two-socket machine: cores 0-7 on NUMA 0, 8-15 on NUMA 1; GPUs
// 0,1 (A100) on NUMA 0 and 2,3 (V100) on NUMA 1.
func gpuBox() *nodeBuilder {
	return node("n1").cpu(16000).mem("64Gi").
		numa(0, "32Gi", cpus(0, 8)...).numa(1, "32Gi", cpus(8, 16)...).
		gpu("0", "A100", 0).gpu("1", "A100", 0).gpu("2", "V100", 1).gpu("3", "V100", 1)
}

func runningOn(id, nodeID string, r api.Resources, asg api.Assignment) *api.Allocation {
	return &api.Allocation{ID: id, NodeID: nodeID, Resources: r, Assignment: asg, DesiredStatus: api.DesiredRun, ClientStatus: api.AllocRunning}
}

func TestAssign(t *testing.T) {
	tests := []struct {
		name     string
		existing []*api.Allocation
		group    *groupBuilder
		wantCPUs []int
		wantNUMA int
		wantGPUs []string
		wantMill int64
	}{
		{name: "nothing to pin", group: taskGroup("g").cpu(1000), wantNUMA: -1},
		{name: "cores rounded up on one numa", group: taskGroup("g").cpu(2500).exclusive(), wantCPUs: []int{0, 1, 2}, wantNUMA: 0},
		{
			name:     "best-fit numa node",
			existing: []*api.Allocation{runningOn("a", "n1", api.Resources{CPUMilli: 5000}, api.Assignment{CPUs: []int{8, 9, 10, 11, 12}, NUMANode: 1})},
			group:    taskGroup("g").cpu(2000).exclusive(),
			wantCPUs: []int{13, 14}, wantNUMA: 1,
		},
		{
			name:     "gpu locality beats best fit",
			existing: []*api.Allocation{runningOn("a", "n1", api.Resources{CPUMilli: 5000}, api.Assignment{CPUs: []int{8, 9, 10, 11, 12}, NUMANode: 1})},
			group:    taskGroup("g").cpu(2000).exclusive().gpus(2).models("A100"),
			wantCPUs: []int{0, 1}, wantNUMA: 0, wantGPUs: []string{"0", "1"},
		},
		{
			name:     "gpus prefer the pinned numa",
			existing: []*api.Allocation{runningOn("a", "n1", api.Resources{CPUMilli: 6000}, api.Assignment{CPUs: cpus(0, 6), NUMANode: 0})},
			group:    taskGroup("g").cpu(3000).exclusive().gpus(1),
			wantCPUs: []int{8, 9, 10}, wantNUMA: 1, wantGPUs: []string{"2"},
		},
		{
			name:     "gpus spill to the other numa when the local ones are taken",
			existing: []*api.Allocation{runningOn("a", "n1", api.Resources{GPUs: 1}, api.Assignment{GPUs: []string{"0"}, NUMANode: -1})},
			group:    taskGroup("g").cpu(1000).exclusive().gpus(3),
			wantCPUs: []int{0}, wantNUMA: 0, wantGPUs: []string{"1", "2", "3"},
		},
		{
			name:     "pins where enough local gpus are free",
			existing: []*api.Allocation{runningOn("a", "n1", api.Resources{GPUs: 1}, api.Assignment{GPUs: []string{"0"}, NUMANode: -1})},
			group:    taskGroup("g").cpu(1000).exclusive().gpus(2),
			wantCPUs: []int{8}, wantNUMA: 1, wantGPUs: []string{"2", "3"},
		},
		{name: "whole gpus of the accepted model", group: taskGroup("g").gpus(1).models("V100"), wantNUMA: -1, wantGPUs: []string{"2"}},
		{
			name: "share picks the tightest fit",
			existing: []*api.Allocation{
				runningOn("a", "n1", api.Resources{GPUMilli: 500}, api.Assignment{GPUs: []string{"0"}, GPUMilli: 500, NUMANode: -1}),
				runningOn("b", "n1", api.Resources{GPUMilli: 700}, api.Assignment{GPUs: []string{"1"}, GPUMilli: 700, NUMANode: -1}),
			},
			group:    taskGroup("g").gpuMilli(300),
			wantNUMA: -1, wantGPUs: []string{"1"}, wantMill: 300,
		},
		{
			name:     "share skips a gpu held whole",
			existing: []*api.Allocation{runningOn("a", "n1", api.Resources{GPUs: 1}, api.Assignment{GPUs: []string{"0"}, NUMANode: -1})},
			group:    taskGroup("g").gpuMilli(300).models("A100"),
			wantNUMA: -1, wantGPUs: []string{"1"}, wantMill: 300,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(gpuBox())
			for _, a := range tt.existing {
				f.putAlloc(a)
			}
			c := newCell(f, 1)
			g := compiled(nil, tt.group)
			mustEqual(t, "feasible", g.check(c, 0), "")
			asg := c.assign(g, 0)
			mustEqual(t, "cpus", join(intsToStrings(asg.CPUs)), join(intsToStrings(tt.wantCPUs)))
			mustEqual(t, "numa", asg.NUMANode, tt.wantNUMA)
			mustEqual(t, "gpus", join(asg.GPUs), join(tt.wantGPUs))
			mustEqual(t, "gpu milli", asg.GPUMilli, tt.wantMill)
		})
	}
}

func TestAssignNeverReusesWithinPlan(t *testing.T) {
	f := newFake(gpuBox())
	w := workload("w",
		taskGroup("pinned").replicas(4).cpu(4000).exclusive(),
		taskGroup("gpu").replicas(4).gpus(1),
		taskGroup("share").replicas(1).gpuMilli(500))
	f.putWorkload(w)
	plan := schedule(f, "w", 5)
	mustEqual(t, "failures", len(plan.Failures), 1)
	mustEqual(t, "share finds no gpu", plan.Failures[0].Summary, "1 node: insufficient gpu")
	var cores []int
	var gpus []string
	for _, a := range planAllocs(plan) {
		cores = append(cores, a.Assignment.CPUs...)
		gpus = append(gpus, a.Assignment.GPUs...)
	}
	slices.Sort(cores)
	slices.Sort(gpus)
	mustEqual(t, "all 16 cores once", join(intsToStrings(cores)), join(intsToStrings(cpus(0, 16))))
	mustEqual(t, "all 4 gpus once", join(gpus), "0,1,2,3")
	ok, reason := CheckNode(f.Node("n1"), f.AllocsByNode("n1"), nil, plan.Place["n1"])
	mustEqual(t, "check node", reason, "")
	mustEqual(t, "ok", ok, true)
}
