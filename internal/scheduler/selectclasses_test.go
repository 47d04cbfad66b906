package scheduler

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/strata-dev/strata/api"
	"pgregory.net/rapid"
)

// TestPropertyClassesKeepPlans: on random cells (racks, zones, nodes
// with and without the keys), with lower-priority work running (so that
// groups may preempt), groups with up to three dynamic terms over coarse
// and fine keys, gangs, and workloads that grow over several evaluations,
// selecting through candidate classes gives the very plan — ids, failure
// words and explanations included — that scanning every candidate gives.
func TestPropertyClassesKeepPlans(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var nodes []*nodeBuilder
		for i := range rapid.IntRange(1, 16).Draw(t, "nodes") {
			b := genNode(t, i)
			if rapid.IntRange(0, 5).Draw(t, "zoneRoll") > 0 {
				b.label("zone", fmt.Sprintf("z%d", rapid.IntRange(0, 2).Draw(t, "zone")))
			}
			nodes = append(nodes, b)
		}
		f := newFake(nodes...)
		indexed := rapid.Bool().Draw(t, "indexed")
		state := func() State {
			if indexed {
				return indexedState{f, NewNodeIndex(f.Nodes())}
			}
			return f
		}
		genBackground(t, f, 2)
		// -1: every key counts by domain count; 16: every key of these
		// small cells buckets by domain.
		coarse := rapid.SampledFrom([]int{-1, 1, 2, 3, 16}).Draw(t, "coarseDomains")
		w := workload("w")
		for gi := range rapid.IntRange(1, 3).Draw(t, "groups") {
			g := genGroup(t, fmt.Sprint("g", gi))
			for range rapid.IntRange(1, 3).Draw(t, "relations") {
				genRelations(t, g)
			}
			if rapid.IntRange(0, 3).Draw(t, "gangRoll") == 0 {
				g.gang(0, rapid.SampledFrom([]string{"", "rack", "zone"}).Draw(t, "topology"))
			}
			w.Groups = append(w.Groups, g.g)
		}
		w.Priority = rapid.IntRange(0, 100).Draw(t, "priority")
		if rapid.Bool().Draw(t, "spreadPolicy") {
			w.SchedulingPolicy.Type = api.PolicySpread
		}
		for step := range rapid.IntRange(1, 3).Draw(t, "steps") {
			for _, g := range w.Groups {
				g.Replicas += rapid.IntRange(0, 6).Draw(t, "more")
			}
			f.putWorkload(w)
			eval := &api.Evaluation{ID: fmt.Sprint("e", step), Workload: "w"}
			sample := rapid.SampledFrom([]int{0, 1, 3}).Draw(t, "sample")
			got := scheduleWith(state(), eval, Options{Seed: int64(step), FeasibleSample: sample}, strategies{coarseDomains: coarse})
			want := scheduleWith(state(), eval, Options{Seed: int64(step), FeasibleSample: sample}, strategies{selection: selectScan})
			a, _ := json.Marshal(got)
			b, _ := json.Marshal(want)
			if string(a) != string(b) {
				t.Fatalf("classes changed the plan:\n got %s\nwant %s", a, b)
			}
			checkPlan(t, f, got)
			f.apply(got, false)
		}
	})
}

// TestPropertySharedTalliesKeepPlans: affinity and peer terms about the
// workload being placed share one tally per key across the plan's groups
// (gangs of one job, trials rolled back, preemption around them); plans
// are those of terms counting with tallies of their own.
func TestPropertySharedTalliesKeepPlans(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var nodes []*nodeBuilder
		for i := range rapid.IntRange(1, 14).Draw(t, "nodes") {
			b := genNode(t, i).label("zone", fmt.Sprintf("z%d", rapid.IntRange(0, 1).Draw(t, "zone")))
			b.label("node", b.n.Name)
			nodes = append(nodes, b)
		}
		f := newFake(nodes...)
		genBackground(t, f, 2)
		w := workload("w")
		for gi := range rapid.IntRange(1, 4).Draw(t, "groups") {
			g := genGroup(t, fmt.Sprint("g", gi))
			switch rapid.IntRange(0, 3).Draw(t, "self") {
			case 0:
				g.peer("w", rapid.IntRange(1, 100).Draw(t, "peerWeight"))
			case 1:
				g.peer("", rapid.IntRange(1, 100).Draw(t, "ownPeerWeight"))
			case 2:
				key := rapid.SampledFrom([]string{"rack", "zone", "node"}).Draw(t, "affKey")
				mode := rapid.SampledFrom([]string{api.ModeHard, api.ModeSoft}).Draw(t, "affMode")
				g.g.Placement.Affinity = append(g.g.Placement.Affinity, api.AffinityRule{Workload: "w", Key: key, Mode: mode, Weight: weightFor(mode)})
			}
			genRelations(t, g)
			if rapid.Bool().Draw(t, "gang") {
				g.gang(0, rapid.SampledFrom([]string{"", "rack", "zone"}).Draw(t, "topology"))
			}
			w.Groups = append(w.Groups, g.g)
		}
		w.Priority = rapid.IntRange(0, 100).Draw(t, "priority")
		for step := range rapid.IntRange(1, 3).Draw(t, "steps") {
			for _, g := range w.Groups {
				g.Replicas += rapid.IntRange(0, 5).Draw(t, "more")
			}
			f.putWorkload(w)
			eval := &api.Evaluation{ID: fmt.Sprint("e", step), Workload: "w"}
			got := Schedule(f, eval, Options{Seed: int64(step)})
			want := scheduleWith(f, eval, Options{Seed: int64(step)}, strategies{freshTallies: true})
			a, _ := json.Marshal(got)
			b, _ := json.Marshal(want)
			if string(a) != string(b) {
				t.Fatalf("shared tallies changed the plan:\n got %s\nwant %s", a, b)
			}
			f.apply(got, false)
		}
	})
}
