package scheduler

import (
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/disruption"
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

// TestPropertyPreemptionWithinBudgets fills random cells with low-priority
// workloads, some of whose groups declare a disruption budget (some of
// them gangs, some replicas not serving yet or unhealthy), then places
// higher-priority workloads of several groups one plan after another. No
// plan may evict more serving replicas of a bounded group than
// disruption.Allowed gave it before the plan, summed over all of the
// plan's placements; every plan passes CheckNode.
func TestPropertyPreemptionWithinBudgets(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		f := newFake(nodesN(rapid.IntRange(2, 8).Draw(t, "nodes"), nil)...)
		for v := range rapid.IntRange(1, 4).Draw(t, "victims") {
			g := taskGroup("g").replicas(rapid.IntRange(1, 6).Draw(t, "replicas")).
				cpu(int64(rapid.IntRange(1, 3).Draw(t, "cpu")) * 1000).mem("1Gi")
			if budget := rapid.IntRange(-1, 3).Draw(t, "budget"); budget >= 0 {
				g.g.Disruption = &api.DisruptionPolicy{MaxUnavailable: budget}
			}
			if rapid.IntRange(0, 4).Draw(t, "gangRoll") == 0 {
				g.gang(0, "")
			}
			w := workload(fmt.Sprintf("v%d", v), g)
			w.Priority = rapid.IntRange(0, 40).Draw(t, "victimPriority")
			f.putWorkload(w)
			plan := schedule(f, w.Name, int64(v))
			f.apply(plan, false)
			for _, a := range planAllocs(plan) {
				switch rapid.IntRange(0, 5).Draw(t, "client") {
				case 0: // still starting
				case 1: // running, failing its checks
					f.setClient(a.ID, api.AllocRunning)
					b := f.alloc(a.ID).Copy()
					b.Health = &api.AllocHealth{Status: api.HealthUnhealthy}
					f.putAlloc(b)
				default:
					f.setClient(a.ID, api.AllocRunning)
				}
			}
		}
		for p := range rapid.IntRange(1, 3).Draw(t, "preemptors") {
			w := workload(fmt.Sprintf("p%d", p))
			for gi := range rapid.IntRange(1, 3).Draw(t, "groups") {
				w.Groups = append(w.Groups, taskGroup(fmt.Sprintf("g%d", gi)).
					replicas(rapid.IntRange(1, 5).Draw(t, "replicas")).
					cpu(int64(rapid.IntRange(1, 4).Draw(t, "cpu"))*1000).g)
			}
			w.Priority = rapid.IntRange(30, 100).Draw(t, "priority")
			f.putWorkload(w)
			before := allowedByGroup(f)
			plan := schedule(f, w.Name, int64(100+p))
			evicted := map[string]int{}
			for id := range preempted(plan) {
				if a := f.alloc(id); disruption.Serving(a) {
					evicted[a.Workload]++
				}
			}
			for wl, n := range evicted {
				if allowed, bounded := before[wl]; bounded && n > allowed {
					t.Fatalf("plan of %s evicts %d serving replicas of %s/g, its budget allows %d", w.Name, n, wl, allowed)
				}
			}
			for nodeID, place := range plan.Place {
				stopping := map[string]bool{}
				for _, s := range plan.Stop[nodeID] {
					stopping[s.AllocID] = true
				}
				if ok, reason := CheckNode(f.Node(nodeID), f.AllocsByNode(nodeID), stopping, place); !ok {
					t.Fatalf("CheckNode %s: %s", nodeID, reason)
				}
			}
			f.apply(plan, false)
			for _, a := range planAllocs(plan) {
				f.setClient(a.ID, api.AllocRunning)
			}
		}
	})
}

// allowedByGroup is disruption.Allowed of every victim workload's group
// "g" that declares a budget, counted from the state on its own.
func allowedByGroup(f *fakeState) map[string]int {
	out := map[string]int{}
	for name, w := range f.workloads {
		tg := w.Groups[0]
		if !strings.HasPrefix(name, "v") || tg.Disruption == nil {
			continue
		}
		serving := map[int]bool{}
		for _, a := range f.AllocsByWorkload("", name) {
			if disruption.Serving(a) && a.Index < tg.Replicas {
				serving[a.Index] = true
			}
		}
		out[name] = disruption.Allowed(disruption.Group{
			Desired: tg.Replicas, MaxUnavailable: tg.Disruption.MaxUnavailable, Serving: len(serving),
		})
	}
	return out
}

// TestPreemptionBudgetSpansThePlansGroups: two groups of one workload,
// placed one after the other in one plan, share the victim group's budget.
func TestPreemptionBudgetSpansThePlansGroups(t *testing.T) {
	f := newFake(nodesN(3, nil)...)
	victimGroup(f, "web", 10, 3, 1)
	f.putWorkload(workload("w", taskGroup("a").cpu(4000), taskGroup("b").cpu(4000)))
	plan := schedule(f, "w", 1)
	mustEqual(t, "preemptions", plan.Preemptions, 1)
	mustEqual(t, "failures", len(plan.Failures), 1)
	mustEqual(t, "failure summary", plan.Failures[0].Summary,
		"2 nodes: preemption would exceed the disruption budget of web/g (maxUnavailable 1); 1 node: insufficient cpu")
	checkAndApply(t, f, plan)
}

// TestPreemptionBudgetNamedOnlyWhenItBlocks: a node where evicting every
// candidate would not make room is not blamed on a budget.
func TestPreemptionBudgetNamedOnlyWhenItBlocks(t *testing.T) {
	f := newFake(nodesN(3, nil)...)
	victimGroup(f, "web", 10, 3, 0)
	f.putWorkload(workload("w", taskGroup("big").mem("9Gi")))
	plan := schedule(f, "w", 1)
	mustEqual(t, "preemptions", plan.Preemptions, 0)
	mustEqual(t, "failures", len(plan.Failures), 1)
	mustEqual(t, "failure summary", plan.Failures[0].Summary, "3 nodes: insufficient memory")
}

// TestPreemptionChargesMovesInFlight: a victim group with a migration or
// a replacement under way has spent that much of its budget already.
func TestPreemptionChargesMovesInFlight(t *testing.T) {
	for _, tt := range []struct {
		name  string
		setup func(f *fakeState)
		want  int
	}{
		{"nothing in flight", func(*fakeState) {}, 1},
		{"a migration in flight", func(f *fakeState) {
			f.alloc("web-2").Migration = &api.Migration{Kind: api.MigrationMove, SourceNode: "n002"}
		}, 0},
		{"a replacement starting beside its old copy", func(f *fakeState) {
			a := runningOn("web-2b", "n003", api.Resources{CPUMilli: 4000, MemoryBytes: 1 << 30}, api.Assignment{NUMANode: -1})
			a.Workload, a.Group, a.Priority, a.Index, a.ClientStatus = "web", "g", 90, 2, api.AllocPending
			a.TaskGroup, a.PreviousAlloc = f.alloc("web-2").TaskGroup, "web-2"
			f.putAlloc(a)
		}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(nodesN(4, nil)...)
			victimGroup(f, "web", 10, 3, 1)
			tt.setup(f)
			f.putWorkload(workload("w", taskGroup("big").replicas(2).cpu(4000)))
			plan := schedule(f, "w", 1)
			mustEqual(t, "preemptions", plan.Preemptions, tt.want)
		})
	}
}
