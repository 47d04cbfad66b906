package scheduler

import (
	"fmt"
	"strings"
	"testing"

	"github.com/strata-dev/strata/api"
)

// victimGroup adds workload wl at priority prio with one group "g" of
// replicas running on the first replicas nodes, each filling its node's
// cpu; budget < 0 leaves the group without a disruption block.
func victimGroup(f *fakeState, wl string, prio, replicas, budget int) *api.Workload {
	g := taskGroup("g").replicas(replicas).cpu(4000).mem("1Gi")
	if budget >= 0 {
		g.g.Disruption = &api.DisruptionPolicy{MaxUnavailable: budget}
	}
	w := workload(wl, g)
	w.Priority = prio
	f.putWorkload(w)
	for i := range replicas {
		a := running(f, fmt.Sprintf("%s-%d", wl, i), f.nodes[i].ID, wl, prio, 4000)
		a.Index, a.TaskGroup, a.WorkloadVersion = i, g.g, w.Version
	}
	return w
}

func TestPreemptionRespectsVictimsDisruptionBudget(t *testing.T) {
	tests := []struct {
		name    string
		budget  int // -1: no disruption block
		down    int // replicas of the victim group not serving before the plan
		want    int // preemptions
		wantWhy string
	}{
		{"budget one stops one of three", 1, 0, 1, "preemption would exceed the disruption budget of web/g (maxUnavailable 1)"},
		{"budget two stops two", 2, 0, 2, "preemption would exceed the disruption budget of web/g (maxUnavailable 2)"},
		{"budget zero stops none", 0, 0, 0, "preemption would exceed the disruption budget of web/g (maxUnavailable 0)"},
		{"a replica already down spends the budget", 1, 1, 1, "preemption would exceed the disruption budget of web/g (maxUnavailable 1)"},
		{"no block: freely preemptible", -1, 0, 3, ""},
		{"budget above the group", 5, 0, 3, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(nodesN(3, nil)...)
			victimGroup(f, "web", 10, 3, tt.budget)
			for i := range tt.down {
				// A replica that does not serve is no victim worth
				// charging, but it already spends the budget.
				f.alloc(fmt.Sprintf("web-%d", i)).ClientStatus = api.AllocPending
			}
			f.putWorkload(workload("w", taskGroup("big").replicas(3).cpu(4000)))
			plan := schedule(f, "w", 1)
			served := 0
			for id := range preempted(plan) {
				if f.alloc(id).ClientStatus == api.AllocRunning {
					served++
				}
			}
			mustEqual(t, "preemptions", plan.Preemptions, tt.want)
			if tt.budget >= 0 {
				if allowed := max(0, tt.budget-tt.down); served > allowed {
					t.Fatalf("%d serving replicas preempted, budget allows %d", served, allowed)
				}
			}
			if tt.wantWhy == "" {
				mustEqual(t, "failures", len(plan.Failures), 0)
			} else {
				mustEqual(t, "failures", len(plan.Failures), 1)
				if s := plan.Failures[0].Summary; !strings.Contains(s, tt.wantWhy) {
					t.Fatalf("summary %q does not name the budget (%q)", s, tt.wantWhy)
				}
				mustEqual(t, "reason counted", plan.Failures[0].Reasons[tt.wantWhy] > 0, true)
			}
			checkAndApply(t, f, plan)
		})
	}
}
