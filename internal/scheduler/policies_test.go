package scheduler

import (
	"testing"

	"github.com/strata-dev/strata/api"
)

func TestDotProductPrefersLeastAlignedNode(t *testing.T) {
	capacity := api.Resources{CPUMilli: 10000, MemoryBytes: 10 << 30}
	cpuHeavy := &Request{Resources: api.Resources{CPUMilli: 4000, MemoryBytes: 1 << 30}}
	// Node a has spare CPU and little memory; node b the opposite. A
	// CPU-heavy request aligns with a's free CPU, so b scores higher.
	a := NodeView{Node: &api.Node{ID: "a", Capacity: capacity}, Free: api.Resources{CPUMilli: 9000, MemoryBytes: 2 << 30}}
	b := NodeView{Node: &api.Node{ID: "b", Capacity: capacity}, Free: api.Resources{CPUMilli: 5000, MemoryBytes: 9 << 30}}
	if sa, sb := (DotProduct{}).Score(cpuHeavy, a), (DotProduct{}).Score(cpuHeavy, b); !(sb > sa) {
		t.Fatalf("dot-product scores a=%.3f b=%.3f, want b higher", sa, sb)
	}
}

func TestRandomIsDeterministicAndVaries(t *testing.T) {
	req := &Request{Workload: &api.Workload{Name: "w", Version: 1}, Group: &api.TaskGroup{Name: "g"}}
	seen := map[float64]bool{}
	for _, id := range []string{"n1", "n2", "n3", "n4", "n5"} {
		v := NodeView{Node: &api.Node{ID: id}, Free: api.Resources{CPUMilli: 1000}}
		s := (Random{}).Score(req, v)
		if s < 0 || s >= 1 || s != (Random{}).Score(req, v) {
			t.Fatalf("score %v for %s is out of range or not deterministic", s, id)
		}
		seen[s] = true
	}
	if len(seen) < 4 {
		t.Fatalf("random scores barely vary across nodes: %v", seen)
	}
	v := NodeView{Node: &api.Node{ID: "n1"}, Free: api.Resources{CPUMilli: 1000}}
	after := NodeView{Node: v.Node, Free: api.Resources{CPUMilli: 500}}
	if (Random{}).Score(req, v) == (Random{}).Score(req, after) {
		t.Fatal("a node's random score does not change after a placement on it")
	}
}

func TestPolicyForBuiltins(t *testing.T) {
	for typ, want := range map[string]Scorer{
		"": BinPack{}, api.PolicyBinpack: BinPack{}, api.PolicySpread: Spread{},
		api.PolicyDotProduct: DotProduct{}, api.PolicyRandom: Random{}, "unknown": BinPack{},
	} {
		got := policyFor(&api.Workload{SchedulingPolicy: api.SchedulingPolicy{Type: typ}}, Options{})(&Request{})
		if len(got) != 1 || got[0].Scorer != want {
			t.Fatalf("policy %q: scorers %+v, want %T", typ, got, want)
		}
	}
}
