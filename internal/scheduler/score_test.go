package scheduler

import (
	"math"
	"testing"

	"github.com/strata-dev/strata/api"
)

func near(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-9 {
		t.Fatalf("%s = %v, want %v", what, got, want)
	}
}

func TestBinPackAndSpread(t *testing.T) {
	capacity := api.Resources{CPUMilli: 4000, MemoryBytes: 8 << 30, GPUs: 4}
	tests := []struct {
		name string
		free api.Resources
		want api.Resources
		pack float64
	}{
		{"empty node", capacity, api.Resources{CPUMilli: 1000, MemoryBytes: 2 << 30}, 0.25},
		{"half full", api.Resources{CPUMilli: 2000, MemoryBytes: 4 << 30}, api.Resources{CPUMilli: 1000, MemoryBytes: 2 << 30}, 0.75},
		{"fills the node", api.Resources{CPUMilli: 1000, MemoryBytes: 2 << 30}, api.Resources{CPUMilli: 1000, MemoryBytes: 2 << 30}, 1},
		{"gpus count for gpu requests", api.Resources{CPUMilli: 4000, MemoryBytes: 8 << 30, GPUs: 4}, api.Resources{GPUs: 3}, 0.25},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			view := NodeView{Node: &api.Node{Capacity: capacity}, Free: tt.free}
			req := &Request{Resources: tt.want}
			near(t, "binpack", BinPack{}.Score(req, view), tt.pack)
			near(t, "spread", Spread{}.Score(req, view), 1-tt.pack)
		})
	}
}

func TestBinPackZeroCapacity(t *testing.T) {
	near(t, "score", BinPack{}.Score(&Request{}, NodeView{Node: &api.Node{}}), 0)
}

func TestLabelScorer(t *testing.T) {
	n := NodeView{Node: &api.Node{Labels: map[string]string{"zone": "z1", "rack": "r1", "ssd": "yes"}}}
	tests := []struct {
		name  string
		group *groupBuilder
		want  float64
	}{
		{"prefer match", taskGroup("g").prefer(40, "zone", "=", "z1"), 0.4},
		{"prefer mismatch", taskGroup("g").prefer(40, "zone", "=", "z2"), 0},
		{"avoid match", taskGroup("g").avoid(30, "rack", "in", "r1", "r2"), -0.3},
		{"both", taskGroup("g").prefer(50, "ssd", "exists").avoid(20, "zone", "=", "z1"), 0.3},
		{"zero weight counts as one", taskGroup("g").prefer(0, "ssd", "exists"), 0.01},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			near(t, "score", newLabelScorer(tt.group.g.Placement, Options{}).Score(nil, n), tt.want)
		})
	}
}

type constScorer float64

func (c constScorer) Score(*Request, NodeView) float64 { return float64(c) }

func TestPolicyFor(t *testing.T) {
	extra := map[string]Policy{"const": func(*Request) []WeightedScorer { return []WeightedScorer{{Scorer: constScorer(7), Weight: 2}} }}
	view := NodeView{Node: &api.Node{Capacity: api.Resources{CPUMilli: 1000}}, Free: api.Resources{CPUMilli: 1000}}
	req := &Request{Resources: api.Resources{CPUMilli: 250}}
	tests := []struct {
		typ  string
		want float64
	}{
		{"", 0.25},
		{api.PolicyBinpack, 0.25},
		{api.PolicySpread, 0.75},
		{"no-such-policy", 0.25},
		{"const", 14},
	}
	for _, tt := range tests {
		t.Run(tt.typ, func(t *testing.T) {
			w := &api.Workload{SchedulingPolicy: api.SchedulingPolicy{Type: tt.typ}}
			total := 0.0
			for _, ws := range policyFor(w, Options{Policies: extra})(req) {
				total += ws.Weight * ws.Scorer.Score(req, view)
			}
			near(t, "score", total, tt.want)
		})
	}
}

func TestPreferOutweighsBinpack(t *testing.T) {
	// Binpack alone would pick the fuller n1; a weight-100 preference for
	// z2 must win.
	f := newFake(
		node("n1").cpu(4000).mem("8Gi").label("zone", "z1").used(api.Resources{CPUMilli: 3000}),
		node("n2").cpu(4000).mem("8Gi").label("zone", "z2"),
	)
	f.putWorkload(workload("w", taskGroup("g").cpu(500).prefer(100, "zone", "=", "z2")))
	plan := schedule(f, "w", 1)
	mustEqual(t, "node", planAllocs(plan)[0].NodeID, "n2")

	f.putWorkload(workload("w", taskGroup("g").cpu(500)))
	plan = schedule(f, "w", 1)
	mustEqual(t, "node without preference", planAllocs(plan)[0].NodeID, "n1")
}

// halfUsedGPU prefers nodes with a half-used GPU and shares the last GPU
// that fits: a stand-in for fragmentation-aware policies.
type halfUsedGPU struct{}

func (halfUsedGPU) ReadsGPUs() bool { return true }
func (halfUsedGPU) Score(_ *Request, n NodeView) float64 {
	for _, f := range n.GPUFree {
		if f == 500 {
			return 1
		}
	}
	return 0
}
func (halfUsedGPU) ChooseShare(_ *Request, _ NodeView, candidates []int) int {
	return candidates[len(candidates)-1]
}

func TestGPUScorerSeesPerGPUOccupancy(t *testing.T) {
	f := newFake(
		node("a").cpu(8000).mem("8Gi").gpu("0", "A100", 0).gpu("1", "A100", 0),
		node("b").cpu(8000).mem("8Gi").gpu("0", "A100", 0).gpu("1", "A100", 0).gpu("2", "A100", 0),
	)
	f.putAlloc(&api.Allocation{ID: "x", Workload: "other", NodeID: "b", DesiredStatus: api.DesiredRun, ClientStatus: api.AllocRunning,
		Resources: api.Resources{CPUMilli: 100, GPUMilli: 500}, Assignment: api.Assignment{NUMANode: -1, GPUs: []string{"1"}, GPUMilli: 500}})
	w := workload("w", taskGroup("g").cpu(100).gpuMilli(300))
	w.SchedulingPolicy.Type = "half"
	f.putWorkload(w)
	policies := map[string]Policy{"half": func(*Request) []WeightedScorer {
		return []WeightedScorer{{Name: "half", Scorer: halfUsedGPU{}, Weight: 1}}
	}}
	plan := Schedule(f, &api.Evaluation{ID: "e", Workload: "w"}, Options{Seed: 1, Policies: policies})
	a := planAllocs(plan)[0]
	mustEqual(t, "node with a half-used GPU", a.NodeID, "b")
	mustEqual(t, "the chooser's GPU, not the best fit (1)", a.Assignment.GPUs[0], "2")
	mustEqual(t, "explained", plan.Explanations[0].Chosen.Components[0].Name, "half")
}
