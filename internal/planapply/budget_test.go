package planapply

import (
	"fmt"
	"slices"
	"testing"

	"github.com/strata-dev/strata/api"
)

// budgetView is a cell of three nodes, each running one replica of web/g
// (priority 10, maxUnavailable budget; budget < 0: no disruption block),
// the first `down` of them stopped already.
func budgetView(budget, down int) *fakeView {
	v := &fakeView{nodes: map[string]*api.Node{}, workloads: map[string]*api.Workload{}}
	tg := &api.TaskGroup{Name: "g", Replicas: 3}
	if budget >= 0 {
		tg.Disruption = &api.DisruptionPolicy{MaxUnavailable: budget}
	}
	v.workloads["web"] = &api.Workload{Name: "web", Priority: 10, Groups: []*api.TaskGroup{tg}}
	for i := range 3 {
		id := fmt.Sprintf("n%d", i+1)
		v.nodes[id] = &api.Node{ID: id, Status: api.NodeReady, Capacity: api.Resources{CPUMilli: 4000, MemoryBytes: 1 << 30}}
		a := alloc(fmt.Sprintf("web-%d", i), id, "web", 4000, false)
		a.Index, a.TaskGroup, a.Priority = i, tg, 10
		if i < down {
			a.DesiredStatus = api.DesiredStop // another plan evicted it meanwhile
		}
		v.allocs = append(v.allocs, a)
	}
	return v
}

// evictingPlan places one replica of w on each of nodes, evicting the
// web replica there.
func evictingPlan(nodes ...int) *api.Plan {
	plan := &api.Plan{Workload: "w", Place: map[string][]*api.Allocation{}, Stop: map[string][]api.StopRequest{}}
	for _, i := range nodes {
		id := fmt.Sprintf("n%d", i+1)
		p := alloc(fmt.Sprintf("p%d", i), id, "w", 4000, false)
		plan.Place[id] = []*api.Allocation{p}
		plan.Stop[id] = []api.StopRequest{{AllocID: fmt.Sprintf("web-%d", i), Reason: "preempted", PreemptedBy: p.ID}}
	}
	return plan
}

// TestDecideKeepsVictimsBudgets: the plan applier judges evictions by the
// engine's rule against the newest state, so two plans computed on one
// snapshot cannot together take a group beyond its budget.
func TestDecideKeepsVictimsBudgets(t *testing.T) {
	why := "preemption would exceed the disruption budget of web/g (maxUnavailable 1)"
	tests := []struct {
		name      string
		budget    int
		down      int
		plan      *api.Plan
		committed []string
		reasons   []string
	}{
		{"within the budget", 1, 0, evictingPlan(0), []string{"n1"}, nil},
		{"one plan beyond it: the later nodes wait", 1, 0, evictingPlan(0, 1, 2), []string{"n1"}, []string{"n2: " + why, "n3: " + why}},
		{"another plan spent it meanwhile", 1, 1, evictingPlan(1), nil, []string{"n2: " + why}},
		{"no disruption block: freely preemptible", -1, 0, evictingPlan(0, 1, 2), []string{"n1", "n2", "n3"}, nil},
		{"a budget of two", 2, 0, evictingPlan(0, 1, 2), []string{"n1", "n2"}, []string{"n3: preemption would exceed the disruption budget of web/g (maxUnavailable 2)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Decide(budgetView(tt.budget, tt.down), tt.plan)
			if !slices.Equal(d.Committed, tt.committed) {
				t.Fatalf("committed = %q, want %q", d.Committed, tt.committed)
			}
			if !slices.Equal(d.Reasons, tt.reasons) {
				t.Fatalf("reasons = %q, want %q", d.Reasons, tt.reasons)
			}
			// Nobody is evicted for a placement that is not committed.
			if len(d.Preempted) != len(tt.committed) {
				t.Fatalf("%d evictions for %d committed placements", len(d.Preempted), len(tt.committed))
			}
		})
	}
}
