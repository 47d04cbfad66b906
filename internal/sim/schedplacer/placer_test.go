package schedplacer

import (
	"testing"

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
