package scheduler

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/strata-dev/strata/api"
	"pgregory.net/rapid"
)

// indexedState is a fakeState that offers a NodeIndex of its nodes.
type indexedState struct {
	*fakeState
	ix *NodeIndex
}

func (s indexedState) NodeIndex() *NodeIndex { return s.ix }

var _ NodeIndexer = indexedState{}

func TestIndexIgnoredWhenItDescribesOtherNodes(t *testing.T) {
	f := newFake(nodesN(3, nil)...)
	mustEqual(t, "same slice", indexFor(indexedState{f, NewNodeIndex(f.Nodes())}, f.Nodes()) != nil, true)
	mustEqual(t, "other slice", indexFor(indexedState{f, NewNodeIndex(newFake(nodesN(3, nil)...).Nodes())}, f.Nodes()) == nil, true)
	mustEqual(t, "shorter", indexFor(indexedState{f, NewNodeIndex(f.Nodes()[:2])}, f.Nodes()) == nil, true)
	mustEqual(t, "no index", indexFor(f, f.Nodes()) == nil, true)
}

func TestBindRuleAgreesWithMatchRule(t *testing.T) {
	f := newFake(nodesN(4, func(i int, b *nodeBuilder) {
		if i < 3 {
			b.label("rack", fmt.Sprint("r", i%2))
		}
	})...)
	ix := NewNodeIndex(f.Nodes())
	for _, op := range []string{api.OpExists, api.OpEqual, api.OpNotEqual, api.OpIn, api.OpNotIn, "~"} {
		for _, values := range [][]string{nil, {"r0"}, {"r1", "r9"}} {
			r := api.LabelRule{Key: "rack", Op: op, Values: values}
			m := bindRule(&r, ix.column("rack"))
			for i, n := range f.Nodes() {
				mustEqual(t, fmt.Sprint(op, values, " on ", n.ID), m.match(i), matchRule(&r, n.Labels))
			}
		}
	}
}

// TestPropertyIndexKeepsPlans: random cells and workloads with required,
// preferred and avoided labels (some nodes lack them) and gangs over label
// domains give the same plans with and without a NodeIndex and a Scratch.
// One Scratch serves every run, as a worker's would: cells of every size
// one after another.
func TestPropertyIndexKeepsPlans(t *testing.T) {
	scr := &Scratch{}
	rapid.Check(t, func(t *rapid.T) {
		var nodes []*nodeBuilder
		for i := range rapid.IntRange(1, 14).Draw(t, "nodes") {
			b := genNode(t, i)
			if rapid.Bool().Draw(t, "hasZone") {
				b.label("zone", fmt.Sprint("z", rapid.IntRange(0, 2).Draw(t, "zone")))
			}
			nodes = append(nodes, b)
		}
		f := newFake(nodes...)
		indexed := indexedState{f, NewNodeIndex(f.Nodes())}
		rule := func(label string) (string, string, []string) {
			key := rapid.SampledFrom([]string{"rack", "zone", "none"}).Draw(t, label+"Key")
			op := rapid.SampledFrom([]string{api.OpExists, api.OpEqual, api.OpNotEqual, api.OpIn, api.OpNotIn}).Draw(t, label+"Op")
			vals := rapid.SliceOfN(rapid.SampledFrom([]string{"r0", "r1", "r2", "z0", "z1", "x"}), 1, 3).Draw(t, label+"Values")
			return key, op, vals
		}
		for k := range rapid.IntRange(1, 5).Draw(t, "workloads") {
			w := workload(fmt.Sprint("w", k))
			for gi := range rapid.IntRange(1, 3).Draw(t, "groups") {
				g := genGroup(t, fmt.Sprint("g", gi))
				if rapid.Bool().Draw(t, "require") {
					key, op, vals := rule("require")
					g.require(key, op, vals...)
				}
				if rapid.Bool().Draw(t, "prefer") {
					key, op, vals := rule("prefer")
					g.prefer(rapid.IntRange(0, 100).Draw(t, "preferWeight"), key, op, vals...)
				}
				if rapid.Bool().Draw(t, "avoid") {
					key, op, vals := rule("avoid")
					g.avoid(rapid.IntRange(0, 100).Draw(t, "avoidWeight"), key, op, vals...)
				}
				genRelations(t, g)
				if rapid.IntRange(0, 2).Draw(t, "gangRoll") == 0 {
					g.gang(0, rapid.SampledFrom([]string{"rack", "zone", ""}).Draw(t, "topology"))
				}
				w.Groups = append(w.Groups, g.g)
			}
			w.Priority = rapid.IntRange(0, 100).Draw(t, "priority")
			if rapid.Bool().Draw(t, "spread") {
				w.SchedulingPolicy.Type = api.PolicySpread
			}
			f.putWorkload(w)
			eval := &api.Evaluation{ID: w.Name, Workload: w.Name}
			got := Schedule(indexed, eval, Options{Seed: int64(k), Scratch: scr})
			want := Schedule(f, eval, Options{Seed: int64(k)})
			a, _ := json.Marshal(got)
			b, _ := json.Marshal(want)
			if string(a) != string(b) {
				t.Fatalf("the index changed the plan:\n got %s\nwant %s", a, b)
			}
			f.apply(got, false)
		}
	})
}

func TestScratchInUseIsNotShared(t *testing.T) {
	f := newFake(nodesN(3, nil)...)
	scr := &Scratch{}
	a := newCellWith(f, 1, scr)
	b := newCellWith(f, 1, scr)
	mustEqual(t, "first borrows", a.scratch == scr, true)
	mustEqual(t, "second has its own", b.scratch == nil, true)
	a.at(2).free.CPUMilli = 1
	a.release()
	b.release()
	c := newCellWith(f, 1, scr)
	mustEqual(t, "free again", c.scratch == scr, true)
	mustEqual(t, "slots cleared", c.slot[2], int32(0))
	mustEqual(t, "state made afresh", c.at(2).free.CPUMilli, int64(4000))
	c.release()
}

func TestLayoutsSharedByShape(t *testing.T) {
	f := newFake(
		node("a").numa(0, "4Gi", cpus(0, 4)...).numa(1, "4Gi", cpus(4, 8)...),
		node("b").numa(0, "4Gi", cpus(0, 4)...).numa(1, "4Gi", cpus(4, 8)...),
		node("c").numa(0, "4Gi", cpus(0, 4)...).numa(1, "8Gi", cpus(4, 8)...),
		node("d").numa(0, "4Gi", cpus(0, 4)...).numa(1, "4Gi", 4, 5, 6, 9),
	)
	ix := NewNodeIndex(f.Nodes())
	mustEqual(t, "same shape shares", ix.layout(0) == ix.layout(1), true)
	mustEqual(t, "other NUMA memory", ix.layout(0) == ix.layout(2), false)
	mustEqual(t, "other cpus", ix.layout(0) == ix.layout(3), false)
	for i, n := range f.Nodes() {
		mustEqual(t, n.ID, fmt.Sprint(ix.layout(i).detail(n)), fmt.Sprint(newNodeDetail(n)))
	}
}
