package leader

import (
	"context"
	"testing"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/fsm"
)

func planAlloc(id, node string, cpu int64, gang bool) *api.Allocation {
	g := &api.TaskGroup{Name: "g", Replicas: 2}
	if gang {
		g.Gang = &api.GangPolicy{MinMember: 2}
	}
	return &api.Allocation{ID: id, Workload: "w", Group: "g", NodeID: node, TaskGroup: g, DesiredStatus: api.DesiredRun,
		ClientStatus: api.AllocPending, Resources: api.Resources{CPUMilli: cpu, MemoryBytes: 1 << 20}}
}

// TestPlanApplierGangIsAllOrNothing: when one node of a gang's plan no
// longer fits, no member is committed, and no victim is evicted for a
// preemptor that was not placed.
func TestPlanApplierGangIsAllOrNothing(t *testing.T) {
	r := newRig(t, Config{})
	r.lead()
	r.addNodes(2) // 32 cores each
	victim := planAlloc("victim", "node-00000", 1000, false)
	victim.Workload, victim.Priority = "low", 100
	parts, err := fsm.PlanParts(&fsm.ApplyPlan{Place: []*api.Allocation{victim}}, fsm.MaxPlanPartBytes, func(string) fsm.StoppedAlloc { return fsm.StoppedAlloc{} })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.p.ProposePlan(parts); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name      string
		gang      bool
		wantAlloc bool
	}{
		{"gang: one node over capacity rejects every member", true, false},
		{"no gang: the fitting node is committed", false, true},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ok := planAlloc("ok-"+tc.name, "node-00000", 1000, tc.gang)
			tooBig := planAlloc("big-"+tc.name, "node-00001", 64000, tc.gang)
			plan := &api.Plan{Workload: "w", Place: map[string][]*api.Allocation{
				"node-00000": {ok}, "node-00001": {tooBig}},
				Stop: map[string][]api.StopRequest{"node-00000": {{AllocID: "victim", Reason: "preempted", PreemptedBy: tooBig.ID}}}}
			res, err := r.l.plans.Submit(context.Background(), plan, &api.Evaluation{ID: "e" + string(rune('0'+i)), Workload: "w"})
			if err != nil {
				t.Fatal(err)
			}
			snap := r.f.State().Snapshot()
			if got := snap.Alloc(ok.ID) != nil; got != tc.wantAlloc {
				t.Fatalf("member on the fitting node committed=%v, want %v (result %+v)", got, tc.wantAlloc, res)
			}
			if snap.Alloc(tooBig.ID) != nil {
				t.Fatal("an allocation over capacity was committed")
			}
			if v := snap.Alloc("victim"); v.DesiredStatus != api.DesiredRun || v.PreemptedBy != "" {
				t.Fatalf("victim evicted for a preemptor that was not placed: %+v", v)
			}
		})
	}
}
