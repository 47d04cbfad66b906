package scheduler

import (
	"fmt"
	"testing"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/topology"
	"pgregory.net/rapid"
)

// preemptCell: one live rack-r1 node full of priority-0 work, two rack-r0
// nodes; the rest down (found by a review: a spread group that preempts
// used a stale victim set and overcommitted n06).
func preemptCell() *fakeState {
	var nodes []*nodeBuilder
	for i := 0; i < 5; i++ {
		nodes = append(nodes, node(fmt.Sprintf("n%02d", i)).cpu(2000).mem("1Gi").label("rack", "r0").status(api.NodeDown))
	}
	nodes = append(nodes,
		node("n05").cpu(2000).mem("1Gi").label("rack", "r0"),
		node("n06").cpu(3000).mem("16Gi").label("rack", "r0"),
		node("n07").cpu(3000).mem("16Gi").label("rack", "r1"),
	)
	f := newFake(nodes...)
	bg := workload("bg0", taskGroup("bg").replicas(6).cpu(300).mem("64Mi").require("rack", "!=", "r0"))
	bg.Priority = 0
	f.putWorkload(bg)
	f.apply(Schedule(f, &api.Evaluation{ID: "bg0", Workload: "bg0"}, Options{Seed: 0}), false)
	return f
}

func TestSpreadThatPreemptsNeverOvercommits(t *testing.T) {
	for _, gang := range []bool{false, true} {
		t.Run(fmt.Sprint("gang=", gang), func(t *testing.T) {
			f := preemptCell()
			g := taskGroup("g").replicas(5).cpu(1300).mem("8192Mi").spread("rack", 1, api.ModeHard)
			if gang {
				g.gang(0, "")
			}
			w := workload("w", g)
			w.Priority = 1
			f.putWorkload(w)
			plan := Schedule(f, &api.Evaluation{ID: "e1", Workload: "w"}, Options{Seed: 1})
			checkPlan(t, f, plan)
		})
	}
}

func TestSelfAffinityFirstReplicaNeedsTheKey(t *testing.T) {
	// a has no rack label and binpack prefers it; the first replica must
	// still go to a rack, or the others could never follow.
	f := newFake(
		node("a").cpu(1000).mem("8Gi"),
		node("b").cpu(64000).mem("64Gi").label("rack", "r0"),
		node("c").cpu(64000).mem("64Gi").label("rack", "r0"),
	)
	f.putWorkload(workload("web", taskGroup("web").replicas(3).cpu(300).affinity("", "rack", api.ModeHard)))
	plan := run(t, f, "web", 1)
	mustEqual(t, "failures", len(plan.Failures), 0)
	mustEqual(t, "per rack", fmt.Sprint(liveByLabel(f, "web", "rack")), "map[r0:3]")
}

func TestAffinityToSiblingGroupIsEnforced(t *testing.T) {
	// api wants the rack of w/cache; cache is placed after it in the same
	// plan, so api finds no cache yet and must wait rather than land
	// anywhere.
	f := threeRacks()
	apiGroup := taskGroup("api").replicas(3).cpu(500)
	apiGroup.g.Placement.Affinity = []api.AffinityRule{{Workload: "w", Group: "cache", Key: "rack", Mode: api.ModeHard}}
	w := workload("w", apiGroup, taskGroup("cache").cpu(500).require("rack", api.OpEqual, "r2"))
	w.SchedulingPolicy.Type = api.PolicySpread
	f.putWorkload(w)
	run(t, f, "w", 1)
	run(t, f, "w", 2) // the next evaluation places api next to cache
	for _, a := range f.AllocsByWorkload("", "w") {
		if live(a) && a.Group == "api" && f.Node(a.NodeID).Labels["rack"] != "r2" {
			t.Fatalf("api replica in rack %s, want r2 (the rack of w/cache)", f.Node(a.NodeID).Labels["rack"])
		}
	}
	mustEqual(t, "api placed next to cache", liveByLabel(f, "w", "rack")["r2"], 4)
}

// TestPropertyHardRelationsHold: with lower-priority work around (so plans
// preempt), several groups, gangs and every kind of relation rule, every
// plan passes CheckNode and, for every domain that received a replica, hard
// spread and hard self anti-affinity hold.
func TestPropertyHardRelationsHold(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var nodes []*nodeBuilder
		for i := range rapid.IntRange(1, 14).Draw(t, "nodes") {
			b := genNode(t, i)
			if rapid.IntRange(0, 5).Draw(t, "zoneRoll") > 0 {
				b.label("zone", fmt.Sprintf("z%d", rapid.IntRange(0, 2).Draw(t, "zone")))
			}
			nodes = append(nodes, b)
		}
		f := newFake(nodes...)
		genBackground(t, f, 2)
		w := workload("w")
		for gi := range rapid.IntRange(1, 3).Draw(t, "groups") {
			g := genGroup(t, fmt.Sprint("g", gi))
			for range rapid.IntRange(1, 3).Draw(t, "relations") {
				genRelations(t, g)
			}
			if rapid.Bool().Draw(t, "peers") {
				g.peer("", 50)
			}
			if rapid.IntRange(0, 3).Draw(t, "gangRoll") == 0 {
				g.gang(0, rapid.SampledFrom([]string{"", "rack", "zone"}).Draw(t, "topology"))
			}
			w.Groups = append(w.Groups, g.g)
		}
		w.Priority = rapid.IntRange(0, 100).Draw(t, "priority")
		for step := range rapid.IntRange(1, 3).Draw(t, "steps") {
			for _, g := range w.Groups {
				g.Replicas += rapid.IntRange(0, 6).Draw(t, "more")
			}
			f.putWorkload(w)
			eval := &api.Evaluation{ID: fmt.Sprint("e", step), Workload: "w"}
			sample := rapid.SampledFrom([]int{0, 1, 3}).Draw(t, "sample")
			plan := Schedule(f, eval, Options{Seed: int64(step), FeasibleSample: sample})
			checkPlan(t, f, plan)
			f.apply(plan, false)
			for _, g := range w.Groups {
				newDom := func(key string) map[string]bool {
					out := map[string]bool{}
					for _, as := range plan.Place {
						for _, a := range as {
							if a.Group == g.Name {
								n := f.Node(a.NodeID)
								if d, ok := topology.Domain(key, n.ID, n.Labels); ok {
									out[d] = true
								}
							}
						}
					}
					return out
				}
				count := func(key string) map[string]int {
					out := map[string]int{}
					for _, a := range f.AllocsByWorkload("", "w") {
						if a.Group == g.Name && live(a) {
							n := f.Node(a.NodeID)
							if d, ok := topology.Domain(key, n.ID, n.Labels); ok {
								out[d]++
							}
						}
					}
					return out
				}
				cg := compiled(w, &groupBuilder{g: g})
				for _, r := range g.Placement.Spread {
					if r.Mode != api.ModeHard {
						continue
					}
					counts := count(r.Key)
					min := -1
					for _, n := range f.Nodes() {
						d, ok := topology.Domain(r.Key, n.ID, n.Labels)
						if !ok || !n.Ready() || !allRequire(cg, n) {
							continue
						}
						if min < 0 || counts[d] < min {
							min = counts[d]
						}
					}
					for d := range newDom(r.Key) {
						if counts[d]-min > r.MaxSkew {
							t.Fatalf("step %d group %s: spread %s maxSkew %d broken: domain %s has %d, min %d (counts %v)", step, g.Name, r.Key, r.MaxSkew, d, counts[d], min, counts)
						}
					}
				}
				for _, r := range g.Placement.AntiAffinity {
					if r.Mode != api.ModeHard || r.Workload != "" {
						continue
					}
					counts := count(r.Key)
					for d := range newDom(r.Key) {
						if counts[d] > 1 {
							t.Fatalf("step %d group %s: anti-affinity %s broken: domain %s has %d", step, g.Name, r.Key, d, counts[d])
						}
					}
				}
			}
		}
	})
}

func allRequire(g *group, n *api.Node) bool {
	for _, r := range g.require {
		if !matchRule(&r.LabelRule, n.Labels) {
			return false
		}
	}
	return true
}

// genBackground places up to most lower- or higher-priority workloads of
// random shapes, each plan checked, so that later plans meet full nodes and
// preempt.
func genBackground(t *rapid.T, f *fakeState, most int) {
	for k := range rapid.IntRange(0, most).Draw(t, "others") {
		w := workload(fmt.Sprint("bg", k), genGroup(t, "bg").replicas(rapid.IntRange(0, 12).Draw(t, "bgReplicas")))
		w.Priority = rapid.IntRange(0, 100).Draw(t, "bgPriority")
		f.putWorkload(w)
		plan := Schedule(f, &api.Evaluation{ID: w.Name, Workload: w.Name}, Options{Seed: int64(k)})
		checkPlan(t, f, plan)
		f.apply(plan, false)
	}
}
