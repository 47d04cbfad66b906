package policy_test

import (
	"testing"

	"github.com/strata-dev/strata/internal/sim/cluster"
	"github.com/strata-dev/strata/internal/sim/policy"
	"github.com/strata-dev/strata/internal/sim/trace"
)

// node builds a trace node with g GPUs of model T4.
func node(name string, cpu int64, gpus int) trace.Node {
	n := trace.Node{Name: name, CPUMilli: cpu, MemoryMiB: 1 << 20, GPUs: gpus}
	if gpus > 0 {
		n.GPUModel = "T4"
	}
	return n
}

// pod builds a pod: gpu < 1000 is a share of one GPU, >= 1000 whole GPUs.
func pod(name string, cpu, gpu int64) trace.Pod {
	p := trace.Pod{Name: name, CPUMilli: cpu, MemoryMiB: 1}
	switch {
	case gpu >= 1000:
		p.NumGPU, p.GPUMilli = int(gpu/1000), 1000
	case gpu > 0:
		p.NumGPU, p.GPUMilli = 1, gpu
	}
	return p
}

// setup builds a cluster and places the given pods with fixed placements.
type pre struct {
	pod  trace.Pod
	node int
	gpus cluster.GPUSet
}

func build(t *testing.T, nodes []trace.Node, placed []pre) *cluster.Cluster {
	t.Helper()
	c, err := cluster.New(nodes)
	if err != nil {
		t.Fatal(err)
	}
	for i := range placed {
		p := &placed[i].pod
		if _, err := c.Assign(p, cluster.PlacementFor(placed[i].node, p, placed[i].gpus)); err != nil {
			t.Fatalf("pre-place %s: %v", p.Name, err)
		}
	}
	return c
}

func gpus(ids ...int) cluster.GPUSet {
	var s cluster.GPUSet
	for _, i := range ids {
		s = s.With(i)
	}
	return s
}

func TestPolicyChoices(t *testing.T) {
	share := func(name string, milli int64) trace.Pod { return pod(name, 1000, milli) }
	// Target workload for FGD: half whole-GPU pods, half 500-milli shares.
	workload := []trace.Pod{pod("w1", 1000, 1000), pod("w2", 1000, 1000), share("s1", 500), share("s2", 500)}
	tests := []struct {
		name     string
		policy   string
		nodes    []trace.Node
		placed   []pre
		pod      trace.Pod
		wantNode int
		wantGPUs cluster.GPUSet
	}{
		{
			name:   "FGD fills the half-used GPU instead of breaking a whole one",
			policy: "FGD", nodes: []trace.Node{node("a", 8000, 1), node("b", 8000, 1)},
			placed: []pre{{share("x", 500), 1, gpus(0)}},
			pod:    share("p", 500), wantNode: 1, wantGPUs: gpus(0),
		},
		{
			name:   "FGD picks the GPU within a node that leaves a usable remainder",
			policy: "FGD", nodes: []trace.Node{node("a", 8000, 2)},
			placed: []pre{{share("x", 300), 0, gpus(0)}, {share("y", 500), 0, gpus(1)}},
			// GPU0 has 700 free, GPU1 500: 500 on GPU1 leaves 0 waste; on GPU0 leaves 200 unusable.
			pod: share("p", 500), wantNode: 0, wantGPUs: gpus(1),
		},
		{
			name:   "FGD avoids stranding GPUs by taking a node's last CPU",
			policy: "FGD", nodes: []trace.Node{node("a", 2000, 1), node("b", 4000, 0)},
			pod: pod("cpu", 1500, 0), wantNode: 1,
		},
		{
			name:   "BestFit takes the fullest node",
			policy: "BestFit", nodes: []trace.Node{node("a", 8000, 2), node("b", 8000, 2)},
			placed: []pre{{pod("x", 4000, 1000), 0, gpus(0)}},
			pod:    share("p", 200), wantNode: 0, wantGPUs: gpus(1),
		},
		{
			name:   "BestFit best-fits the GPU within the node",
			policy: "BestFit", nodes: []trace.Node{node("a", 8000, 3)},
			placed: []pre{{share("x", 300), 0, gpus(0)}, {share("y", 600), 0, gpus(2)}},
			pod:    share("p", 400), wantNode: 0, wantGPUs: gpus(2),
		},
		{
			name:   "DotProd prefers the node least aligned with the request",
			policy: "DotProd", nodes: []trace.Node{node("a", 16000, 1), node("b", 4000, 1)},
			pod: pod("p", 2000, 1000), wantNode: 1, wantGPUs: gpus(0),
		},
		{
			name:   "GpuPacking prefers a partly used GPU over a fresh one",
			policy: "GpuPacking", nodes: []trace.Node{node("a", 8000, 2), node("b", 8000, 2)},
			placed: []pre{{share("x", 500), 1, gpus(1)}, {pod("y", 1000, 1000), 0, gpus(0)}},
			pod:    share("p", 300), wantNode: 1, wantGPUs: gpus(1),
		},
		{
			name:   "GpuPacking prefers a used node over an idle one",
			policy: "GpuPacking", nodes: []trace.Node{node("a", 8000, 2), node("b", 8000, 2)},
			placed: []pre{{pod("y", 1000, 1000), 1, gpus(0)}},
			pod:    pod("p", 1000, 1000), wantNode: 1, wantGPUs: gpus(1),
		},
		{
			name:   "GpuPacking opens the smallest idle node",
			policy: "GpuPacking", nodes: []trace.Node{node("a", 8000, 4), node("b", 8000, 2)},
			pod: share("p", 300), wantNode: 1, wantGPUs: gpus(0),
		},
		{
			name:   "GpuClustering joins pods of the same kind",
			policy: "GpuClustering", nodes: []trace.Node{node("a", 8000, 4), node("b", 8000, 4), node("c", 8000, 4)},
			placed: []pre{{pod("w", 1000, 1000), 0, gpus(0)}, {share("s", 500), 1, gpus(0)}},
			pod:    share("p", 200), wantNode: 1, wantGPUs: gpus(0),
		},
		{
			name:   "GpuClustering prefers an idle node to a node of another kind",
			policy: "GpuClustering", nodes: []trace.Node{node("a", 8000, 4), node("b", 8000, 4)},
			placed: []pre{{pod("w", 1000, 1000), 0, gpus(0)}},
			pod:    share("p", 200), wantNode: 1, wantGPUs: gpus(0),
		},
		{
			name:   "every policy respects the GPU model",
			policy: "BestFit", nodes: []trace.Node{node("a", 8000, 1), {Name: "v", CPUMilli: 8000, MemoryMiB: 1 << 20, GPUs: 1, GPUModel: "V100"}},
			placed: []pre{{share("x", 100), 0, gpus(0)}},
			pod:    trace.Pod{Name: "p", CPUMilli: 1, NumGPU: 1, GPUMilli: 100, GPUSpec: []string{"V100"}}, wantNode: 1, wantGPUs: gpus(0),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := build(t, tc.nodes, tc.placed)
			sel, err := policy.New(tc.policy, policy.Options{Seed: 1, Workload: workload})
			if err != nil {
				t.Fatal(err)
			}
			pl, ok := sel.Place(c, &tc.pod)
			if !ok {
				t.Fatal("no placement")
			}
			if pl.Node != tc.wantNode || pl.GPUs != tc.wantGPUs {
				t.Fatalf("placed on node %d GPUs %b, want node %d GPUs %b", pl.Node, pl.GPUs, tc.wantNode, tc.wantGPUs)
			}
			if _, err := c.Assign(&tc.pod, pl); err != nil {
				t.Fatalf("placement rejected: %v", err)
			}
		})
	}
}

func TestRandomIsUniformAndSeeded(t *testing.T) {
	c := build(t, []trace.Node{node("a", 8000, 1), node("b", 8000, 1), node("c", 8000, 1), node("d", 1, 1)}, nil)
	p := pod("p", 1000, 500)
	counts := map[int]int{}
	sel, _ := policy.New("Random", policy.Options{Seed: 7})
	again, _ := policy.New("Random", policy.Options{Seed: 7})
	for i := 0; i < 3000; i++ {
		pl, ok := sel.Place(c, &p)
		pl2, _ := again.Place(c, &p)
		if !ok || pl != pl2 {
			t.Fatalf("seeded runs diverged: %+v vs %+v", pl, pl2)
		}
		counts[pl.Node]++
	}
	if counts[3] != 0 {
		t.Fatal("Random chose an infeasible node")
	}
	for n := 0; n < 3; n++ {
		if counts[n] < 850 || counts[n] > 1150 {
			t.Fatalf("counts %v not uniform", counts)
		}
	}
}

func TestNoFit(t *testing.T) {
	c := build(t, []trace.Node{node("a", 8000, 1)}, nil)
	for _, name := range policy.Names() {
		sel, err := policy.New(name, policy.Options{Seed: 1, Workload: []trace.Pod{pod("w", 1, 1000)}})
		if err != nil {
			t.Fatal(err)
		}
		p := pod("big", 1000, 2000)
		if _, ok := sel.Place(c, &p); ok {
			t.Errorf("%s placed a 2-GPU pod on a 1-GPU node", name)
		}
	}
	if _, err := policy.New("Nope", policy.Options{}); err == nil {
		t.Fatal("unknown policy accepted")
	}
}
