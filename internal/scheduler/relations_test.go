package scheduler

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"pgregory.net/rapid"
)

func (b *groupBuilder) spread(key string, maxSkew int, mode string) *groupBuilder {
	r := api.SpreadRule{Key: key, MaxSkew: maxSkew, Mode: mode}
	if mode == api.ModeSoft {
		r.Weight = 100
	}
	b.g.Placement.Spread = append(b.g.Placement.Spread, r)
	return b
}

func (b *groupBuilder) affinity(workload, key, mode string) *groupBuilder {
	b.g.Placement.Affinity = append(b.g.Placement.Affinity, api.AffinityRule{Workload: workload, Key: key, Mode: mode, Weight: weightFor(mode)})
	return b
}

func (b *groupBuilder) antiAffinity(workload, key, mode string) *groupBuilder {
	b.g.Placement.AntiAffinity = append(b.g.Placement.AntiAffinity, api.AffinityRule{Workload: workload, Key: key, Mode: mode, Weight: weightFor(mode)})
	return b
}

func (b *groupBuilder) peer(workload string, weight int) *groupBuilder {
	b.g.Placement.CommunicatesWith = append(b.g.Placement.CommunicatesWith, api.PeerRule{Workload: workload, Weight: weight})
	return b
}

func (b *groupBuilder) data(dataset, mode string, weight int) *groupBuilder {
	b.g.Placement.DataLocality = append(b.g.Placement.DataLocality, api.DataRule{Dataset: dataset, Mode: mode, Weight: weight})
	return b
}

func weightFor(mode string) int {
	if mode == api.ModeSoft {
		return 100
	}
	return 0
}

// threeRacks has racks r0, r1, r2 of two big nodes each (n000..n005).
func threeRacks() *fakeState {
	return newFake(nodesN(6, func(i int, b *nodeBuilder) {
		b.cpu(64000).mem("64Gi").label("rack", fmt.Sprintf("r%d", i/2)).label("row", "w0")
	})...)
}

// run places workload w (already put) and applies the plan.
func run(t *testing.T, f *fakeState, name string, seed int64) *api.Plan {
	t.Helper()
	plan := schedule(f, name, seed)
	checkPlan(t, f, plan)
	f.apply(plan, false)
	return plan
}

// liveByLabel counts a workload's live allocations by node label key.
func liveByLabel(f *fakeState, workload, key string) map[string]int {
	out := map[string]int{}
	for _, a := range f.AllocsByWorkload("", workload) {
		if live(a) {
			out[f.Node(a.NodeID).Labels[key]]++
		}
	}
	return out
}

func TestHardSpreadKeepsSkew(t *testing.T) {
	for seed := int64(1); seed <= 8; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			f := threeRacks()
			// Binpack alone would put all seven on one node.
			f.putWorkload(workload("web", taskGroup("web").replicas(7).cpu(500).spread("rack", 1, api.ModeHard)))
			plan := run(t, f, "web", seed)
			mustEqual(t, "failures", len(plan.Failures), 0)
			got := liveByLabel(f, "web", "rack")
			counts := []int{got["r0"], got["r1"], got["r2"]}
			slices.Sort(counts)
			mustEqual(t, "per rack", fmt.Sprint(counts), "[2 2 3]")
		})
	}
}

func TestHardSpreadCountsRunningReplicas(t *testing.T) {
	f := threeRacks()
	f.putWorkload(workload("web", taskGroup("web").replicas(2).cpu(500).require("rack", api.OpEqual, "r0")))
	run(t, f, "web", 1)
	mustEqual(t, "seeded in r0", liveByLabel(f, "web", "rack")["r0"], 2)
	// Scaling to 5 with a spread rule: the three new replicas must avoid
	// r0, which is already two ahead.
	f.putWorkload(workload("web", taskGroup("web").replicas(5).cpu(500).spread("rack", 1, api.ModeHard)))
	run(t, f, "web", 2)
	mustEqual(t, "per rack", fmt.Sprint(liveByLabel(f, "web", "rack")), "map[r0:2 r1:2 r2:1]")
}

func TestHardSpreadRefusesRatherThanSkew(t *testing.T) {
	// r1's node is too small for a replica, so r1 stays at 0 and r0 may
	// only run one (maxSkew 1): the rest wait, as Kubernetes'
	// DoNotSchedule does.
	f := newFake(node("a").cpu(8000).mem("8Gi").label("rack", "r0"), node("b").cpu(100).mem("8Gi").label("rack", "r1"))
	f.putWorkload(workload("web", taskGroup("web").replicas(3).cpu(500).spread("rack", 1, api.ModeHard)))
	plan := run(t, f, "web", 1)
	mustEqual(t, "placed", len(planAllocs(plan)), 1)
	mustEqual(t, "failures", len(plan.Failures), 1)
	mustEqual(t, "summary", plan.Failures[0].Summary, "1 node: insufficient cpu; 1 node: spread over rack: maxSkew 1 reached")

	// Soft spread places them all anyway.
	f = newFake(node("a").cpu(8000).mem("8Gi").label("rack", "r0"), node("b").cpu(100).mem("8Gi").label("rack", "r1"))
	f.putWorkload(workload("web", taskGroup("web").replicas(3).cpu(500).spread("rack", 1, api.ModeSoft)))
	plan = run(t, f, "web", 1)
	mustEqual(t, "soft placed", len(planAllocs(plan)), 3)
}

func TestHardSpreadNeedsTheKey(t *testing.T) {
	f := newFake(node("a").cpu(8000).mem("8Gi").label("rack", "r0"), node("b").cpu(8000).mem("8Gi"))
	f.putWorkload(workload("web", taskGroup("web").replicas(2).cpu(500).spread("rack", 2, api.ModeHard)))
	plan := run(t, f, "web", 1)
	for _, a := range planAllocs(plan) {
		mustEqual(t, "node", a.NodeID, "a")
	}
}

func TestSoftSpreadPrefersEmptierDomains(t *testing.T) {
	f := threeRacks()
	f.putWorkload(workload("web", taskGroup("web").replicas(6).cpu(500).spread("rack", 1, api.ModeSoft)))
	run(t, f, "web", 3)
	mustEqual(t, "per rack", fmt.Sprint(liveByLabel(f, "web", "rack")), "map[r0:2 r1:2 r2:2]")
}

func TestSelfAntiAffinity(t *testing.T) {
	f := threeRacks()
	f.putWorkload(workload("db", taskGroup("db").replicas(5).cpu(500).antiAffinity("", "rack", api.ModeHard)))
	plan := run(t, f, "db", 1)
	mustEqual(t, "per rack", fmt.Sprint(liveByLabel(f, "db", "rack")), "map[r0:1 r1:1 r2:1]")
	mustEqual(t, "failures", len(plan.Failures), 1)
	mustEqual(t, "missing", plan.Failures[0].Missing, 2)
	mustEqual(t, "summary", plan.Failures[0].Summary, "6 nodes: rack already runs a replica of this group (anti-affinity)")
}

func TestSelfAffinityKeepsReplicasTogether(t *testing.T) {
	for seed := int64(1); seed <= 5; seed++ {
		f := threeRacks()
		f.putWorkload(workload("job", taskGroup("job").replicas(4).cpu(40000).affinity("", "rack", api.ModeHard)))
		run(t, f, "job", seed)
		got := liveByLabel(f, "job", "rack")
		// Two replicas fill a rack (two 64-core nodes); the others wait.
		mustEqual(t, fmt.Sprint("racks used, seed ", seed), len(got), 1)
	}
}

func TestAffinityToAnotherWorkload(t *testing.T) {
	f := threeRacks()
	f.putWorkload(workload("web", taskGroup("web").replicas(3).cpu(500).affinity("cache", "rack", api.ModeHard)))
	plan := run(t, f, "web", 1)
	mustEqual(t, "without cache", plan.Failures[0].Summary, "6 nodes: rack does not run cache (affinity)")

	f.putWorkload(workload("cache", taskGroup("cache").cpu(500).require("rack", api.OpEqual, "r2")))
	run(t, f, "cache", 1)
	run(t, f, "web", 2)
	mustEqual(t, "web next to cache", fmt.Sprint(liveByLabel(f, "web", "rack")), "map[r2:3]")
}

func TestAntiAffinityToAnotherWorkload(t *testing.T) {
	f := threeRacks()
	f.putWorkload(workload("noisy", taskGroup("noisy").replicas(2).cpu(500).require("rack", api.OpIn, "r0", "r1")))
	run(t, f, "noisy", 1)
	f.putWorkload(workload("web", taskGroup("web").replicas(4).cpu(500).antiAffinity("noisy", "rack", api.ModeHard)))
	plan := run(t, f, "web", 1)
	mustEqual(t, "failures", len(plan.Failures), 0)
	got := liveByLabel(f, "web", "rack")
	mustEqual(t, "web", got["r2"], 4)
	// Evicting noisy is not an option either: web is not higher priority.
}

func TestAffinityTargetIsNeverPreempted(t *testing.T) {
	f := newFake(node("a").cpu(1000).mem("8Gi").label("rack", "r0"))
	f.putWorkload(workload("cache", taskGroup("cache").cpu(1000)))
	run(t, f, "cache", 1)
	w := workload("web", taskGroup("web").cpu(500).affinity("cache", "rack", api.ModeHard))
	w.Priority = 1000
	f.putWorkload(w)
	plan := run(t, f, "web", 1)
	mustEqual(t, "preemptions", plan.Preemptions, 0)
	mustEqual(t, "failures", len(plan.Failures), 1)
}

func TestCommunicatesWithPrefersNearNodes(t *testing.T) {
	// Rows w0 (racks r0, r1) and w1 (rack r2); the parameter server runs
	// on n003 (rack r1). Under spread alone workers would go to any empty
	// node; with the peer rule the first goes to n002, the empty node of
	// the same rack (2 hops), the second to n003 itself (0 hops, but half
	// full), the third to row w0 (4 hops) rather than row w1.
	f := newFake(nodesN(6, func(i int, b *nodeBuilder) {
		b.cpu(2000).mem("64Gi").label("rack", fmt.Sprintf("r%d", i/2)).label("row", map[bool]string{true: "w0", false: "w1"}[i < 4])
		b.label("node", b.n.Name) // as agents label their nodes
	})...)
	f.putWorkload(workload("ps", taskGroup("ps").cpu(1000).require("node", api.OpEqual, "n003")))
	mustEqual(t, "ps placed", len(planAllocs(run(t, f, "ps", 1))), 1)
	w := workload("worker", taskGroup("worker").cpu(1000).peer("ps", 100))
	w.SchedulingPolicy.Type = api.PolicySpread
	for _, step := range []struct {
		replicas int
		want     []string
	}{{1, []string{"n002"}}, {2, []string{"n003"}}, {3, []string{"n000", "n001"}}} {
		w.Groups[0].Replicas = step.replicas
		f.putWorkload(w)
		plan := run(t, f, "worker", int64(step.replicas))
		got := planAllocs(plan)[0].NodeID
		if !slices.Contains(step.want, got) {
			t.Fatalf("worker %d went to %s, want one of %v", step.replicas, got, step.want)
		}
	}
}

func TestDataLocality(t *testing.T) {
	cell := func() *fakeState {
		return newFake(
			node("a").cpu(4000).mem("8Gi"),
			node("b").cpu(4000).mem("8Gi").label(api.DatasetLabelPrefix+"imagenet", "2"),
			node("c").cpu(4000).mem("8Gi").label(api.DatasetLabelPrefix+"imagenet", "8"),
			node("d").cpu(4000).mem("8Gi").label(api.DatasetLabelPrefix+"coco", "yes"),
		)
	}
	f := cell()
	f.putWorkload(workload("train", taskGroup("t").cpu(1000).data("imagenet", api.ModeSoft, 100)))
	mustEqual(t, "most shards", planAllocs(run(t, f, "train", 1))[0].NodeID, "c")

	f = cell()
	f.putWorkload(workload("train", taskGroup("t").replicas(5).cpu(4000).data("imagenet", api.ModeHard, 0)))
	plan := run(t, f, "train", 1)
	mustEqual(t, "placed", len(planAllocs(plan)), 2)
	mustEqual(t, "summary", plan.Failures[0].Summary, "2 nodes: insufficient cpu; 2 nodes: no shards of dataset imagenet")

	f = cell()
	f.putWorkload(workload("train", taskGroup("t").cpu(1000).data("coco", api.ModeHard, 0)))
	mustEqual(t, "any value is a shard", planAllocs(run(t, f, "train", 1))[0].NodeID, "d")
}

func TestTimeWindows(t *testing.T) {
	cfg := &api.CellConfig{TimeWindows: []api.TimeWindow{{Name: "peak-hours", Days: []string{"mon", "tue", "wed", "thu", "fri"}, Start: "09:00", End: "18:00"}}}
	wl := func() *api.Workload {
		g := taskGroup("g").cpu(500)
		g.g.Placement.Avoid = []api.LabelRule{{Key: "powerZone", Op: api.OpEqual, Values: []string{"B"}, Weight: 100, Window: "peak-hours"}}
		w := workload("w", g)
		w.SchedulingPolicy.Type = api.PolicySpread
		return w
	}
	monday10 := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	sunday10 := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		cell *api.CellConfig
		now  time.Time
		want string
	}{
		{"peak: avoided", cfg, monday10, "a"},
		{"off peak: the emptier node", cfg, sunday10, "b"},
		{"window not defined: always avoided", nil, sunday10, "a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(
				node("a").cpu(4000).mem("8Gi").label("powerZone", "A").used(api.Resources{CPUMilli: 2000}),
				node("b").cpu(4000).mem("8Gi").label("powerZone", "B"),
			)
			f.putWorkload(wl())
			plan := Schedule(f, &api.Evaluation{ID: "e", Workload: "w"}, Options{Seed: 1, Now: tt.now, Cell: tt.cell})
			mustEqual(t, "node", planAllocs(plan)[0].NodeID, tt.want)
		})
	}
}

func TestCellDefaultPolicy(t *testing.T) {
	f := newFake(node("a").cpu(4000).mem("8Gi").used(api.Resources{CPUMilli: 2000}), node("b").cpu(4000).mem("8Gi"))
	w := workload("w", taskGroup("g").cpu(500))
	w.SchedulingPolicy.Type = ""
	f.putWorkload(w)
	plan := Schedule(f, &api.Evaluation{ID: "e", Workload: "w"}, Options{Seed: 1})
	mustEqual(t, "binpack by default", planAllocs(plan)[0].NodeID, "a")
	plan = Schedule(f, &api.Evaluation{ID: "e", Workload: "w"}, Options{Seed: 1, Cell: &api.CellConfig{SchedulingPolicy: api.PolicySpread}})
	mustEqual(t, "cell default spread", planAllocs(plan)[0].NodeID, "b")
}

func TestGangWithAntiAffinityRollsBackCounts(t *testing.T) {
	// Rack r1 has three nodes, r0 two: a gang of 3 with one member per
	// node fits only in r1. The trial in r0 places two and is rolled
	// back; its members must not count afterwards.
	for seed := int64(1); seed <= 6; seed++ {
		f := rackCell()
		f.putWorkload(workload("g", taskGroup("m").replicas(3).cpu(1000).gang(0, "rack").antiAffinity("", "node", api.ModeHard)))
		plan := run(t, f, "g", seed)
		mustEqual(t, "failures", len(plan.Failures), 0)
		got := placedLabels(f, plan, "rack")
		mustEqual(t, fmt.Sprint("racks, seed ", seed), fmt.Sprint(got), "map[r1:3]")
		nodes := map[string]bool{}
		for _, a := range planAllocs(plan) {
			nodes[a.NodeID] = true
		}
		mustEqual(t, "distinct nodes", len(nodes), 3)
	}
}

func TestExplanation(t *testing.T) {
	f := newFake(
		node("a").cpu(4000).mem("8Gi").label("zone", "z1"),
		node("b").cpu(4000).mem("8Gi").label("zone", "z2"),
		node("c").cpu(100).mem("8Gi").label("zone", "z1"),
		node("d").cpu(4000).mem("8Gi").label("zone", "z3").status(api.NodeDraining),
	)
	f.putWorkload(workload("w", taskGroup("g").replicas(2).cpu(1000).require("zone", api.OpIn, "z1", "z2", "z3").prefer(30, "zone", api.OpEqual, "z2").spread("zone", 1, api.ModeSoft)))
	plan := Schedule(f, &api.Evaluation{ID: "e", Workload: "w"}, Options{Seed: 1, FeasibleSample: -1})
	mustEqual(t, "explanations", len(plan.Explanations), 1)
	e := plan.Explanations[0]
	mustEqual(t, "placed", e.Placed, 2)
	mustEqual(t, "examined", e.NodesExamined, 4)
	mustEqual(t, "feasible", e.NodesFeasible, 2)
	mustEqual(t, "filtered", fmt.Sprint(e.Filtered), "[{resources insufficient cpu 1 [c]} {eligible node draining 1 [d]}]")
	mustEqual(t, "chosen", e.Chosen.Node, "b")
	var names []string
	total := 0.0
	for _, c := range e.Chosen.Components {
		names = append(names, fmt.Sprintf("%s=%.2f", c.Name, c.Score))
		total += c.Score
	}
	mustEqual(t, "components", strings.Join(names, " "), "spread zone=1.00 prefer zone=z2=0.30 binpack=0.12")
	near(t, "total", e.Chosen.Score, round4(total))
}

// TestPropertySpreadAndAntiAffinity: whatever the cell and the order of
// evaluations, a hard spread never leaves a domain more than maxSkew
// ahead of the least-loaded eligible one, and a hard self anti-affinity
// never puts two replicas in one domain.
func TestPropertySpreadAndAntiAffinity(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var nodes []*nodeBuilder
		for i := range rapid.IntRange(1, 12).Draw(t, "nodes") {
			b := genNode(t, i).label("rack", fmt.Sprintf("r%d", rapid.IntRange(0, 3).Draw(t, "rack")))
			nodes = append(nodes, b)
		}
		f := newFake(nodes...)
		key := "rack"
		skew := rapid.IntRange(1, 3).Draw(t, "maxSkew")
		anti := rapid.Bool().Draw(t, "anti")
		g := genGroup(t, "g")
		g.g.Gang = nil
		if anti {
			g.antiAffinity("", key, api.ModeHard)
		} else {
			g.spread(key, skew, api.ModeHard)
		}
		g.replicas(0)
		for step := range rapid.IntRange(1, 3).Draw(t, "steps") {
			// Only growing: scaling down stops replicas by index, not by
			// domain, as Kubernetes does.
			g.replicas(g.g.Replicas + rapid.IntRange(1, 8).Draw(t, "more"))
			f.putWorkload(workload("w", g))
			plan := Schedule(f, &api.Evaluation{ID: fmt.Sprint("e", step), Workload: "w"}, Options{Seed: int64(step)})
			checkPlan(t, f, plan)
			f.apply(plan, false)
			checkState(t, f)
			counts := map[string]int{}
			for _, n := range f.nodes {
				eligible := n.Ready()
				for _, r := range g.g.Placement.Require {
					eligible = eligible && matchRule(&r, n.Labels)
				}
				if eligible {
					counts[n.Labels[key]] += 0 // a rack with an eligible node counts, even empty
				}
			}
			for _, a := range f.AllocsByWorkload("", "w") {
				if live(a) {
					counts[f.Node(a.NodeID).Labels[key]]++
				}
			}
			lo, hi := 1<<30, 0
			for _, n := range counts {
				lo, hi = min(lo, n), max(hi, n)
			}
			if anti && hi > 1 {
				t.Fatalf("anti-affinity: %v", counts)
			}
			if !anti && len(counts) > 0 && hi-lo > skew {
				t.Fatalf("skew %d > %d: %v", hi-lo, skew, counts)
			}
		}
	})
}
