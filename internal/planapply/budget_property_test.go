package planapply

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/disruption"
	"github.com/strata-dev/strata/internal/scheduler"
)

// stateView is a fakeView the engine can schedule on too.
type stateView struct{ *fakeView }

func (v stateView) Nodes() []*api.Node {
	out := slices.Collect(maps.Values(v.nodes))
	slices.SortFunc(out, func(a, b *api.Node) int { return cmpString(a.ID, b.ID) })
	return out
}

func (v stateView) Index() uint64 { return 1 }

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestPropertyEngineAndApplierAgreeOnBudgets: one rule for what may be
// evicted. A plan the engine makes on a state commits in full against
// that same state, and whatever Decide commits against a state evicts no
// more serving replicas of a budgeted group than disruption.Allowed gives
// it there, whether the plan was made on that state or another.
func TestPropertyEngineAndApplierAgreeOnBudgets(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		v := stateView{&fakeView{nodes: map[string]*api.Node{}, workloads: map[string]*api.Workload{}}}
		nodes := rapid.IntRange(2, 6).Draw(t, "nodes")
		for i := range nodes {
			id := fmt.Sprintf("n%d", i)
			v.nodes[id] = &api.Node{ID: id, Status: api.NodeReady, Eligibility: api.NodeEligible,
				Capacity: api.Resources{CPUMilli: 4000, MemoryBytes: 1 << 30}}
		}
		for w := range rapid.IntRange(1, 3).Draw(t, "victims") {
			tg := &api.TaskGroup{Name: "g", Replicas: rapid.IntRange(1, 5).Draw(t, "replicas")}
			if budget := rapid.IntRange(-1, 2).Draw(t, "budget"); budget >= 0 {
				tg.Disruption = &api.DisruptionPolicy{MaxUnavailable: budget}
			}
			name := fmt.Sprintf("v%d", w)
			v.workloads[name] = &api.Workload{Name: name, Priority: 10, Groups: []*api.TaskGroup{tg}}
			for r := range tg.Replicas {
				node := v.nodes[fmt.Sprintf("n%d", rapid.IntRange(0, nodes-1).Draw(t, "node"))]
				cpu := int64(rapid.IntRange(1, 2).Draw(t, "cpu")) * 1000
				if node.Allocated.CPUMilli+cpu > node.Capacity.CPUMilli {
					continue // no room: the replica is down
				}
				a := alloc(fmt.Sprintf("%s-%d", name, r), node.ID, name, cpu, false)
				a.Index, a.TaskGroup, a.Priority = r, tg, 10
				if rapid.IntRange(0, 3).Draw(t, "client") == 0 {
					a.ClientStatus = api.AllocPending
				}
				node.Allocated = node.Allocated.Add(a.Resources)
				v.allocs = append(v.allocs, a)
			}
		}
		p := &api.Workload{Name: "p", Priority: 50, Version: 1}
		for g := range rapid.IntRange(1, 2).Draw(t, "groups") {
			p.Groups = append(p.Groups, &api.TaskGroup{Name: fmt.Sprintf("g%d", g), Replicas: rapid.IntRange(1, 4).Draw(t, "preemptors"),
				Tasks: []*api.Task{{Name: "t", Driver: "mock", Resources: api.Resources{CPUMilli: int64(rapid.IntRange(1, 4).Draw(t, "need")) * 1000}}}})
		}
		v.workloads["p"] = p
		allowed := map[string]int{}
		for name, w := range v.workloads {
			if tg := w.Groups[0]; name != "p" && tg.Disruption != nil {
				g := disruption.Group{Desired: tg.Replicas, MaxUnavailable: tg.Disruption.MaxUnavailable}
				for _, a := range v.AllocsByWorkload("", name) {
					if disruption.Serving(a) {
						g.Serving++
					}
				}
				allowed[name] = disruption.Allowed(g)
			}
		}
		plan := scheduler.Schedule(v, &api.Evaluation{ID: "e", Workload: "p"}, scheduler.Options{Seed: int64(rapid.IntRange(0, 9).Draw(t, "seed"))})
		d := Decide(v, plan)
		if !d.Full() {
			t.Fatalf("the engine's plan is rejected on its own snapshot: %q", d.Reasons)
		}
		// The same plan against a state where another plan already evicted
		// one serving replica of each budgeted group.
		for _, a := range v.allocs {
			if _, bounded := allowed[a.Workload]; bounded && disruption.Serving(a) && allowed[a.Workload] > 0 && rapid.Bool().Draw(t, "evictedMeanwhile") {
				a.DesiredStatus = api.DesiredStop
				allowed[a.Workload]--
			}
		}
		d = Decide(v, plan)
		evicted := map[string]int{}
		for _, a := range d.Preempted {
			if disruption.Serving(a) {
				evicted[a.Workload]++
			}
		}
		for name, n := range evicted {
			if budget, bounded := allowed[name]; bounded && n > budget {
				t.Fatalf("Decide commits %d evictions of serving %s/g, its budget allows %d", n, name, budget)
			}
		}
	})
}
