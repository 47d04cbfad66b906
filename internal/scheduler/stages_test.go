package scheduler

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-dev/strata/api"
)

// TestStagesDescribeThemselves compiles a group that uses every filter of
// the pipeline (relation filters included) and checks that each one says
// what it is: a name for explanations, a kind the bounds rely on and a
// non-empty key. A new filter type that forgets one fails here.
func TestStagesDescribeThemselves(t *testing.T) {
	f := newFake(node("n1").cpu(8000).mem("16Gi").label("rack", "r1").numa(0, "8Gi", cpus(0, 4)...).numa(1, "8Gi", cpus(4, 8)...).gpu("0", "A100", 0))
	f.putWorkload(workload("db", taskGroup("db").cpu(100).mem("64Mi")))
	tg := taskGroup("train").cpu(1000).mem("1Gi").exclusive().gpus(1).models("A100").require("rack", "!=", "r9").port("http", 0)
	tg.g.Placement.AntiAffinity = []api.AffinityRule{{Key: "rack", Workload: "db", Mode: api.ModeHard}}
	w := workload("w", tg)
	f.putWorkload(w)
	g := compileGroup(w, tg.g, Options{})
	c := newCell(f, 1)
	g.relate(c, w)

	seen := map[string]bool{}
	kinds := map[stageKind]int{}
	for k, flt := range g.filters {
		name, key := flt.name(), flt.key(g)
		if name == "" || key == "" {
			t.Fatalf("filter %d (%T): name %q key %q: every stage names itself and its key", k, flt, name, key)
		}
		if s := flt.kind().String(); s == "unknown" {
			t.Fatalf("filter %s (%T) has no kind", name, flt)
		}
		if seen[key] {
			t.Fatalf("filter %s (%T): key %q repeats another filter's", name, flt, key)
		}
		seen[key] = true
		kinds[flt.kind()]++
	}
	for _, k := range []stageKind{kindStatic, kindDynamic, kindCapacity} {
		if kinds[k] == 0 {
			t.Fatalf("no filter of kind %s in %v: the test no longer covers every kind", k, g.filters)
		}
	}
	// Relation filters sit before the first capacity filter.
	capacity := false
	for _, flt := range g.filters {
		if flt.kind() == kindCapacity {
			capacity = true
		} else if capacity && flt.kind() == kindDynamic {
			t.Fatalf("relation filter %s after a capacity filter", flt.name())
		}
	}
}

// TestPropertyStaticKeysSeparateViews: groups whose static filters have
// the same key share one gang view, so they must accept exactly the same
// nodes; groups whose static filters differ must never share one. A static
// filter whose key left out what it reads of the group fails here.
func TestPropertyStaticKeysSeparateViews(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var nodes []*nodeBuilder
		for i := range rapid.IntRange(1, 12).Draw(t, "nodes") {
			nodes = append(nodes, genNode(t, i))
		}
		f := newFake(nodes...)
		c := newCell(f, 1)
		gs := (&placer{cell: c}).gangs()
		var groups []*group
		for k := range rapid.IntRange(2, 6).Draw(t, "groups") {
			tb := genGroup(t, fmt.Sprintf("g%d", k))
			groups = append(groups, compileGroup(workload("w", tb), tb.g, Options{}))
		}
		accepts := func(g *group) string {
			b := make([]byte, c.size())
			for i := range b {
				b[i] = '0'
				if c.passesStatic(g, i) {
					b[i] = '1'
				}
			}
			return string(b)
		}
		for a := range groups {
			for b := a + 1; b < len(groups); b++ {
				ga, gb := groups[a], groups[b]
				if gs.view(ga) == gs.view(gb) && accepts(ga) != accepts(gb) {
					t.Fatalf("groups %d and %d share a view (key %q) but accept %s and %s",
						a, b, staticKey(ga), accepts(ga), accepts(gb))
				}
			}
		}
	})
}
