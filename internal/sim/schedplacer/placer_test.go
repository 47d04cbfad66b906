package schedplacer

import (
	"fmt"
	"testing"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/sim/cluster"
	"github.com/strata-dev/strata/internal/sim/trace"
)

func TestPlacerUsesTheSchedulerAndRespectsGPUs(t *testing.T) {
	nodes := []trace.Node{
		{Name: "cpu", CPUMilli: 8000, MemoryMiB: 16384},
		{Name: "gpu", CPUMilli: 8000, MemoryMiB: 16384, GPUs: 2, GPUModel: "V100"},
	}
	c, err := cluster.New(nodes)
	if err != nil {
		t.Fatal(err)
	}
	p := New("binpack", 1, -1)
	pods := []trace.Pod{
		{Name: "share-a", CPUMilli: 1000, MemoryMiB: 1024, NumGPU: 1, GPUMilli: 600},
		{Name: "share-b", CPUMilli: 1000, MemoryMiB: 1024, NumGPU: 1, GPUMilli: 400},
		{Name: "whole", CPUMilli: 1000, MemoryMiB: 1024, NumGPU: 1, GPUMilli: 1000},
		{Name: "wrong-model", CPUMilli: 1000, MemoryMiB: 1024, NumGPU: 1, GPUMilli: 1000, GPUSpec: []string{"A100"}},
		{Name: "no-gpu-left", CPUMilli: 1000, MemoryMiB: 1024, NumGPU: 1, GPUMilli: 1000},
	}
	want := []bool{true, true, true, false, false}
	for i := range pods {
		pl, ok := p.Place(c, &pods[i])
		if ok != want[i] {
			t.Fatalf("pod %s: placed=%v, want %v", pods[i].Name, ok, want[i])
		}
		if !ok {
			continue
		}
		if pl.Node != 1 {
			t.Fatalf("GPU pod %s placed on node %d, want the GPU node", pods[i].Name, pl.Node)
		}
		if _, err := c.Assign(&pods[i], pl); err != nil {
			t.Fatalf("the cluster refused the scheduler's placement of %s: %v", pods[i].Name, err)
		}
	}
	// Best fit packs both shares onto one GPU and leaves the other whole.
	if free := c.Node(1).GPUFree; free[0]+free[1] != 0 {
		t.Fatalf("GPU free after placements = %v, want all used", free)
	}
}

// TestPlaceAllKeepsTheDifferentMachineConstraint: a run of a job's tasks
// with the constraint lands on distinct nodes, none of them a node that
// already runs a task of the job, and stops at the nodes available.
func TestPlaceAllKeepsTheDifferentMachineConstraint(t *testing.T) {
	var nodes []trace.Node
	for i := 0; i < 6; i++ {
		nodes = append(nodes, trace.Node{Name: fmt.Sprint("n", i), CPUMilli: 64000, MemoryMiB: 65536})
	}
	c, err := cluster.New(nodes)
	if err != nil {
		t.Fatal(err)
	}
	running := &trace.Pod{Name: "7-0", CPUMilli: 1000, MemoryMiB: 1024, Job: 7, DistinctNode: true}
	if _, err := c.Assign(running, cluster.PlacementFor(2, running, 0)); err != nil {
		t.Fatal(err)
	}
	var run []*trace.Pod
	for k := 1; k <= 7; k++ {
		run = append(run, &trace.Pod{Name: fmt.Sprint("7-", k), CPUMilli: 1000, MemoryMiB: 1024, Job: 7, DistinctNode: true})
	}
	p := New("binpack", 1, 0)
	pls := p.PlaceAll(c, run)
	if len(pls) != 5 {
		t.Fatalf("placed %d of 7 on 6 nodes, one of them the job's: want 5", len(pls))
	}
	seen := map[int]bool{2: true}
	for k, pl := range pls {
		if seen[pl.Node] {
			t.Fatalf("task %d on node %d, which runs another task of the job", k, pl.Node)
		}
		seen[pl.Node] = true
		if _, err := c.Assign(run[k], pl); err != nil {
			t.Fatal(err)
		}
	}
	// The node shown as draining for the call is ready again.
	if n := p.Node(fmt.Sprintf("sim-%06d", 2)); n.Status != "ready" {
		t.Fatalf("node 2 left %q", n.Status)
	}
	// Tasks of another job share nodes freely: binpack stacks them.
	other := []*trace.Pod{{Name: "8-0", CPUMilli: 1000, MemoryMiB: 1024, Job: 8}, {Name: "8-1", CPUMilli: 1000, MemoryMiB: 1024, Job: 8}}
	if pls := p.PlaceAll(c, other); len(pls) != 2 || pls[0].Node != pls[1].Node {
		t.Fatalf("job 8: %+v", pls)
	}
}

// TestViewAllocationsSumToAllocated: the translated view carries every
// node's occupancy in its allocations as the server's store does, so the
// plan applier's rules (planapply, which sum a node's allocations) judge
// the simulator's plans as the server's.
func TestViewAllocationsSumToAllocated(t *testing.T) {
	nodes := []trace.Node{
		{Name: "cpu", CPUMilli: 8000, MemoryMiB: 16384},
		{Name: "gpu", CPUMilli: 8000, MemoryMiB: 16384, GPUs: 2, GPUModel: "V100"},
	}
	c, err := cluster.New(nodes)
	if err != nil {
		t.Fatal(err)
	}
	p := New("binpack", 1, -1)
	pods := []trace.Pod{
		{Name: "cpu", CPUMilli: 3000, MemoryMiB: 2048},
		{Name: "share", CPUMilli: 1000, MemoryMiB: 1024, NumGPU: 1, GPUMilli: 600},
		{Name: "whole", CPUMilli: 500, MemoryMiB: 512, NumGPU: 1, GPUMilli: 1000},
	}
	for i := range pods {
		pl, ok := p.Place(c, &pods[i])
		if !ok {
			t.Fatalf("pod %s not placed", pods[i].Name)
		}
		if _, err := c.Assign(&pods[i], pl); err != nil {
			t.Fatal(err)
		}
	}
	p.sync(c)
	for _, n := range p.Nodes() {
		var sum api.Resources
		for _, a := range p.AllocsByNode(n.ID) {
			sum = sum.Add(a.Resources)
		}
		if sum != n.Allocated {
			t.Fatalf("node %s: allocations sum to %+v, Allocated %+v", n.ID, sum, n.Allocated)
		}
	}
}
