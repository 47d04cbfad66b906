package bench

import (
	"testing"

	"github.com/strata-dev/strata/api"
)

// TestApplyKeepsServerRules: the bench commits through the server's
// plan-applier rules, so a gang plan with one node that no longer fits
// commits nothing, and a victim whose preemptor is not placed keeps
// running. The bench's own applier lacked both.
func TestApplyKeepsServerRules(t *testing.T) {
	st := NewState(GenerateNodes(2, 1))
	n1, n2 := st.Nodes()[0], st.Nodes()[1]
	mk := func(id string, n *api.Node, cpu int64, gang bool) *api.Allocation {
		a := &api.Allocation{ID: id, Workload: "w", Group: "g", NodeID: n.ID, Resources: api.Resources{CPUMilli: cpu},
			Assignment: api.Assignment{NUMANode: -1}, DesiredStatus: api.DesiredRun, ClientStatus: api.AllocRunning}
		if gang {
			a.Workload = "gang"
			a.TaskGroup = &api.TaskGroup{Name: "g", Gang: &api.GangPolicy{MinMember: 2}}
		}
		return a
	}
	if r := st.Apply(&api.Plan{Place: map[string][]*api.Allocation{n1.ID: {mk("low", n1, n1.Capacity.CPUMilli, false)}}}); r.Placed != 1 {
		t.Fatalf("first plan: %+v", r)
	}

	r := st.Apply(&api.Plan{Place: map[string][]*api.Allocation{
		n1.ID: {mk("m1", n1, 1, true)}, // n1 is full
		n2.ID: {mk("m2", n2, 1, true)},
	}})
	if r.Placed != 0 || len(r.Rejected) != 2 || len(r.RejectReasons) != 1 {
		t.Fatalf("partial gang: placed %d, rejected %v (%v): want nothing placed, both nodes rejected", r.Placed, r.Rejected, r.RejectReasons)
	}

	r = st.Apply(&api.Plan{
		Place: map[string][]*api.Allocation{n1.ID: {mk("big", n1, n1.Capacity.CPUMilli+1, false)}},
		Stop:  map[string][]api.StopRequest{n1.ID: {{AllocID: "low", Reason: "preempted", PreemptedBy: "big"}}},
	})
	if r.Stopped != 0 || len(r.Preempted) != 0 {
		t.Fatalf("victim of an unplaced preemptor stopped: %+v", r)
	}
	if a := st.Alloc("low"); a.DesiredStatus != api.DesiredRun {
		t.Fatalf("low is %s, want it running", a.DesiredStatus)
	}
	if p := st.Verify(); len(p) > 0 {
		t.Fatal(p)
	}
}
