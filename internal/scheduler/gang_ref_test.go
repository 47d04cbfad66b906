package scheduler

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/strata-dev/strata/api"
	"pgregory.net/rapid"
)

// placeGangExhaustive is the gang search without room bounds or static
// views: every domain of every level is tried on the whole order, as the
// engine did before gangview.go. Plans must not differ from placeGang's.
func placeGangExhaustive(p *placer, g *group, gi groupIntents) (api.GroupFailure, bool) {
	size, intents := gangSize(g.tg), gi.place
	need := size - gi.kept
	if need <= 0 {
		return p.placeGroup(g, intents)
	}
	if need > intents.len() {
		f := p.cell.failure(g, intents.len())
		f.Summary = fmt.Sprintf("gang of %d cannot be completed: %d running, only %d more may be placed", size, gi.kept, intents.len())
		return f, false
	}
	levels := gangLevels(g.tg.Gang.Topology)
	holds := make([]int, len(levels)+1)
	for l := range levels {
		holds[l] = -1
	}
	try := func(order []int32, preempt bool, failed func()) (int, bool) {
		t := p.begin(g)
		k := p.placeIn(g, intents, order, preempt)
		if k >= need {
			t.commit()
			return k, true
		}
		if failed != nil {
			failed()
		}
		t.rollback()
		return k, false
	}
	var f api.GroupFailure
	for _, preempt := range []bool{false, true} {
		tried := levels
		if preempt && len(levels) > 0 {
			t := p.begin(g)
			if p.placeIn(g, intents, p.cell.order, true) < need {
				tried = nil
			}
			t.rollback()
		}
		for l, key := range tried {
			for _, d := range p.gangs().domains(key) {
				k, ok := try(d, preempt, nil)
				if ok {
					return p.placeRest(g, intents.from(k))
				}
				holds[l] = max(holds[l], k)
			}
		}
		k, ok := try(p.cell.order, preempt, func() { f = p.cell.failure(g, intents.len()) })
		if ok {
			return p.placeRest(g, intents.from(k))
		}
		holds[len(levels)] = max(holds[len(levels)], k)
	}
	f.Summary = p.gangSummary(g, size, need, levels, holds, f.Summary)
	return f, false
}

// TestPropertyGangBoundsKeepPlans: on random cells with racks and zones,
// lower-priority work running (so that gangs may preempt) and several gang
// groups, the bounded gang search gives the very plan, ids and failure
// words included, that trying every domain gives.
func TestPropertyGangBoundsKeepPlans(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var nodes []*nodeBuilder
		for i := range rapid.IntRange(1, 14).Draw(t, "nodes") {
			b := genNode(t, i).label("zone", fmt.Sprintf("z%d", rapid.IntRange(0, 1).Draw(t, "zone")))
			if rapid.Bool().Draw(t, "gpuLabel") {
				b.label("gpu", "yes")
			}
			nodes = append(nodes, b)
		}
		f := newFake(nodes...)
		genBackground(t, f, 3)
		w := workload("gang")
		// Gangs of one shape share room tables (gangview.go); other shapes
		// do not.
		shape := genGroup(t, "shape")
		same := rapid.Bool().Draw(t, "sameShape")
		for gi := range rapid.IntRange(1, 5).Draw(t, "gangs") {
			g := genGroup(t, fmt.Sprint("gang", gi))
			if same {
				g = taskGroup(fmt.Sprint("gang", gi))
				*g.task() = *shape.task()
				g.g.Placement = shape.g.Placement
			}
			g.replicas(rapid.IntRange(1, 12).Draw(t, "gangReplicas"))
			genRelations(t, g)
			g.gang(rapid.IntRange(0, g.g.Replicas).Draw(t, "minMember"), rapid.SampledFrom([]string{"", "rack", "zone", "node", "gpu"}).Draw(t, "topology"))
			w.Groups = append(w.Groups, g.g)
		}
		w.Priority = rapid.IntRange(0, 100).Draw(t, "priority")
		f.putWorkload(w)
		for step := range rapid.IntRange(1, 3).Draw(t, "steps") {
			eval := &api.Evaluation{ID: fmt.Sprint("e", step), Workload: "gang"}
			got := Schedule(f, eval, Options{Seed: int64(step)})
			want := scheduleWith(f, eval, Options{Seed: int64(step)}, strategies{placeGang: placeGangExhaustive})
			a, _ := json.Marshal(got)
			b, _ := json.Marshal(want)
			if string(a) != string(b) {
				t.Fatalf("bounded gang search changed the plan:\n got %s\nwant %s", a, b)
			}
			f.apply(got, false)
		}
	})
}

// genRelations adds random relation rules (spread, affinity and
// anti-affinity to the group's own replicas or to "bg0") to a group, so
// that the equivalence tests cover dynamic and static terms.
func genRelations(t *rapid.T, g *groupBuilder) {
	mode := func(label string) string {
		return rapid.SampledFrom([]string{api.ModeHard, api.ModeSoft}).Draw(t, label)
	}
	key := func(label string) string { return rapid.SampledFrom([]string{"rack", "zone", "node"}).Draw(t, label) }
	switch rapid.IntRange(0, 5).Draw(t, "relation") {
	case 1:
		g.spread(key("spreadKey"), rapid.IntRange(1, 2).Draw(t, "maxSkew"), mode("spreadMode"))
	case 2:
		g.antiAffinity("", key("antiKey"), mode("antiMode"))
	case 3:
		g.affinity("", key("affKey"), mode("affMode"))
	case 4:
		g.affinity("bg0", key("otherKey"), mode("otherMode"))
	case 5:
		g.antiAffinity("bg0", key("otherAntiKey"), mode("otherAntiMode"))
	}
}
