package planapply

import (
	"slices"
	"strings"
	"testing"

	"github.com/strata-dev/strata/api"
)

// fakeView is a View over a few nodes and allocations.
type fakeView struct {
	nodes     map[string]*api.Node
	allocs    []*api.Allocation
	workloads map[string]*api.Workload
}

func (v *fakeView) Workload(_, name string) *api.Workload { return v.workloads[name] }

func (v *fakeView) AllocsByWorkload(_, name string) []*api.Allocation {
	var out []*api.Allocation
	for _, a := range v.allocs {
		if a.Workload == name {
			out = append(out, a)
		}
	}
	return out
}

func (v *fakeView) Node(id string) *api.Node { return v.nodes[id] }

func (v *fakeView) AllocsByNode(id string) []*api.Allocation {
	var out []*api.Allocation
	for _, a := range v.allocs {
		if a.NodeID == id {
			out = append(out, a)
		}
	}
	return out
}

func (v *fakeView) Alloc(id string) *api.Allocation {
	for _, a := range v.allocs {
		if a.ID == id {
			return a
		}
	}
	return nil
}

func newView() *fakeView {
	v := &fakeView{nodes: map[string]*api.Node{}}
	for _, id := range []string{"n1", "n2", "n3"} {
		v.nodes[id] = &api.Node{ID: id, Status: api.NodeReady, Capacity: api.Resources{CPUMilli: 4000, MemoryBytes: 1 << 30}}
	}
	v.nodes["n3"].Status = api.NodeDraining
	v.allocs = []*api.Allocation{
		alloc("old", "n1", "low", 3000, false),
		alloc("other", "n2", "low", 1000, false),
	}
	return v
}

func alloc(id, node, workload string, cpu int64, gang bool) *api.Allocation {
	a := &api.Allocation{ID: id, NodeID: node, Workload: workload, Group: "g", DesiredStatus: api.DesiredRun,
		ClientStatus: api.AllocRunning, Resources: api.Resources{CPUMilli: cpu}, Assignment: api.Assignment{NUMANode: -1}}
	if gang {
		a.TaskGroup = &api.TaskGroup{Name: "g", Gang: &api.GangPolicy{}}
	}
	return a
}

func place(as ...*api.Allocation) map[string][]*api.Allocation {
	out := map[string][]*api.Allocation{}
	for _, a := range as {
		out[a.NodeID] = append(out[a.NodeID], a)
	}
	return out
}

func ids(as []*api.Allocation) []string {
	var out []string
	for _, a := range as {
		out = append(out, a.ID)
	}
	return out
}

func stopIDs(ss []api.StopRequest) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.AllocID)
	}
	return out
}

// TestDecide walks every rule of the plan applier: what commits, what is
// rejected and why, and which stops go through.
func TestDecide(t *testing.T) {
	tests := []struct {
		name                string
		plan                api.Plan
		committed, rejected []string
		reasons             []string // substrings, in order
		placed, stopped     []string
		preempted           []string
	}{
		{
			name:      "fits",
			plan:      api.Plan{Place: place(alloc("a", "n1", "w", 1000, false), alloc("b", "n2", "w", 3000, false))},
			committed: []string{"n1", "n2"}, placed: []string{"a", "b"},
		},
		{
			name:      "over capacity is rejected, the rest commits",
			plan:      api.Plan{Place: place(alloc("a", "n1", "w", 1001, false), alloc("b", "n2", "w", 1000, false))},
			committed: []string{"n2"}, rejected: []string{"n1"}, reasons: []string{"n1: insufficient cpu"}, placed: []string{"b"},
		},
		{
			name:      "the plan's own stops make room",
			plan:      api.Plan{Place: place(alloc("a", "n1", "w", 4000, false)), Stop: map[string][]api.StopRequest{"n1": {{AllocID: "old", Reason: "update"}}}},
			committed: []string{"n1"}, placed: []string{"a"}, stopped: []string{"old"},
		},
		{
			name:     "unknown and draining nodes",
			plan:     api.Plan{Place: place(alloc("a", "gone", "w", 1, false), alloc("b", "n3", "w", 1, false))},
			rejected: []string{"gone", "n3"}, reasons: []string{"gone: node not found", "n3: node draining"},
		},
		{
			name:     "an id the state already has",
			plan:     api.Plan{Place: place(alloc("other", "n1", "w", 1, false))},
			rejected: []string{"n1"}, reasons: []string{"allocation id other already exists"},
		},
		{
			name:      "an id used twice in the plan",
			plan:      api.Plan{Place: place(alloc("x", "n1", "w", 1, false), alloc("x", "n2", "w", 1, false))},
			committed: []string{"n1"}, rejected: []string{"n2"}, reasons: []string{"n2: allocation id x already exists"}, placed: []string{"x"},
		},
		{
			name:     "a gang is all or nothing",
			plan:     api.Plan{Place: place(alloc("g1", "n1", "w", 2000, true), alloc("g2", "n2", "w", 1000, true))},
			rejected: []string{"n1", "n2"}, reasons: []string{"n1: insufficient cpu"},
		},
		{
			name: "no eviction for a preemptor that is not placed",
			plan: api.Plan{
				Place: place(alloc("p1", "n1", "w", 4001, false), alloc("p2", "n2", "w", 4000, false)),
				Stop: map[string][]api.StopRequest{
					"n1": {{AllocID: "old", PreemptedBy: "p1"}},
					"n2": {{AllocID: "other", PreemptedBy: "p2"}, {AllocID: "gone", Reason: "scale down"}},
				},
			},
			committed: []string{"n2"}, rejected: []string{"n1"}, reasons: []string{"n1: insufficient cpu"},
			placed: []string{"p2"}, stopped: []string{"other", "gone"}, preempted: []string{"other"},
		},
		{
			name:    "stops alone always commit",
			plan:    api.Plan{Stop: map[string][]api.StopRequest{"n2": {{AllocID: "other"}}, "n1": {{AllocID: "old", PreemptedBy: "elsewhere"}}}},
			stopped: []string{"old", "other"}, preempted: []string{"old"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Decide(newView(), &tt.plan)
			check := func(what string, got, want []string) {
				t.Helper()
				if !slices.Equal(got, want) {
					t.Fatalf("%s = %q, want %q", what, got, want)
				}
			}
			check("committed", d.Committed, tt.committed)
			check("rejected", d.Rejected, tt.rejected)
			check("placed", ids(d.Place), tt.placed)
			check("stopped", stopIDs(d.Stop), tt.stopped)
			check("preempted", ids(d.Preempted), tt.preempted)
			if len(d.Reasons) != len(tt.reasons) {
				t.Fatalf("reasons = %q, want %q", d.Reasons, tt.reasons)
			}
			for k := range tt.reasons {
				if !strings.Contains(d.Reasons[k], tt.reasons[k]) {
					t.Fatalf("reason %d = %q, want it to say %q", k, d.Reasons[k], tt.reasons[k])
				}
			}
			if d.Full() != (len(tt.rejected) == 0) {
				t.Fatalf("Full() = %v with rejected %q", d.Full(), d.Rejected)
			}
		})
	}
}
