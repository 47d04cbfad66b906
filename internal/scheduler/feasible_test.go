package scheduler

import (
	"fmt"
	"slices"
	"testing"

	"github.com/strata-dev/strata/api"
	"pgregory.net/rapid"
)

func nodesN(n int, build func(i int, b *nodeBuilder)) []*nodeBuilder {
	out := make([]*nodeBuilder, n)
	for i := range out {
		out[i] = node(fmt.Sprintf("n%03d", i)).cpu(4000).mem("8Gi")
		if build != nil {
			build(i, out[i])
		}
	}
	return out
}

func TestNodeOrderIsSeededPermutation(t *testing.T) {
	f := newFake(nodesN(50, nil)...)
	a, b, c := newCell(f, 1).order, newCell(f, 1).order, newCell(f, 2).order
	mustEqual(t, "same seed same order", slices.Equal(a, b), true)
	mustEqual(t, "other seed other order", slices.Equal(a, c), false)
	sorted := slices.Clone(a)
	slices.Sort(sorted)
	for i, v := range sorted {
		mustEqual(t, "permutation", int(v), i)
	}
}

func TestFeasibleSetSampling(t *testing.T) {
	tests := []struct {
		name       string
		limit      int
		unfit      int // nodes 0..unfit-1 are not ready
		wantSize   int
		wantCursor int // -1: whole cell
	}{
		{"stops after limit feasible nodes", 5, 0, 5, 5},
		{"walks past rejected nodes", 5, 20, 5, -1},
		{"limit larger than cell", 100, 10, 30, 40},
		{"nothing fits", 5, 40, 0, 40},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(nodesN(40, func(i int, b *nodeBuilder) {
				if i < tt.unfit {
					b.status(api.NodeDown)
				}
			})...)
			c := newCell(f, 3)
			s := newFeasibleSet(compiled(nil, taskGroup("g").cpu(100)), c, tt.limit)
			s.fill()
			mustEqual(t, "size", s.size(), tt.wantSize)
			if tt.wantCursor >= 0 {
				mustEqual(t, "cursor", s.cursor, tt.wantCursor)
			}
			for _, cand := range s.sel.(*candidateHeap).nodes {
				mustEqual(t, "only ready nodes", c.node(int(cand.node)).Ready(), true)
				mustEqual(t, "rank is order position", c.order[cand.rank], cand.node)
			}
		})
	}
}

func TestCandidateHeapBreaksTiesBySeededOrder(t *testing.T) {
	g := &group{}
	s := &candidateHeap{g: g}
	for _, cd := range []candidate{{node: 1, rank: 4, score: 0.5}, {node: 2, rank: 2, score: 0.5}, {node: 3, rank: 1, score: 0.4}} {
		s.push(cd)
	}
	j, ok := s.best()
	mustEqual(t, "found", ok, true)
	mustEqual(t, "best", s.nodes[j].node, int32(2))
	_, ok = (&candidateHeap{g: g}).best()
	mustEqual(t, "empty", ok, false)
}

func TestFeasibleSetUpdateDropsFullNodes(t *testing.T) {
	f := newFake(node("n1").cpu(1000).mem("8Gi"), node("n2").cpu(4000).mem("8Gi"))
	c := newCell(f, 1)
	g := compiled(nil, taskGroup("g").cpu(1000))
	w := newFeasibleSet(g, c, 10)
	w.fill()
	s := w.sel.(*candidateHeap)
	mustEqual(t, "size", w.size(), 2)
	j := slices.IndexFunc(s.nodes, func(cd candidate) bool { return cd.node == 0 })
	c.place(0, &api.Allocation{Resources: g.req.Resources})
	s.update(j) // re-judged when the window is next asked
	mustEqual(t, "size after filling n1", w.size(), 1)
	mustEqual(t, "remaining", s.nodes[0].node, int32(1))
	before := s.nodes[0].score
	c.place(1, &api.Allocation{Resources: g.req.Resources})
	s.update(0)
	mustEqual(t, "size after placing on n2", w.size(), 1)
	mustEqual(t, "rescored higher", s.nodes[0].score > before, true)
}

// TestPropertyCandidateHeapPicksLinearBest drives the candidate heap
// through random pushes, re-scores of the best, removals and full re-scores
// and checks that best is always what a linear scan picks.
func TestPropertyCandidateHeapPicksLinearBest(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := &candidateHeap{g: &group{}}
		score := rapid.IntRange(0, 5) // few values: many ties
		rank := int32(0)
		for range rapid.IntRange(1, 60).Draw(t, "steps") {
			// Positions are addressed, as the engine does, once best
			// has put the heap in order.
			s.ordered()
			switch op := rapid.IntRange(0, 3).Draw(t, "op"); {
			case op == 0 || len(s.nodes) == 0:
				s.push(candidate{node: rank, rank: rank, score: float64(score.Draw(t, "score"))})
				rank++
			case op == 1:
				s.nodes[0].score = float64(score.Draw(t, "rescore"))
				s.fix(0)
			case op == 2:
				s.remove(rapid.IntRange(0, len(s.nodes)-1).Draw(t, "at"))
			default:
				for j := range s.nodes {
					s.nodes[j].score = float64(score.Draw(t, "all"))
				}
				heapInit(s)
			}
			if len(s.nodes) == 0 {
				continue
			}
			j, _ := s.best()
			want := 0
			for j := range s.nodes {
				if s.nodes[j].before(&s.nodes[want]) {
					want = j
				}
			}
			if s.nodes[j] != s.nodes[want] {
				t.Fatalf("best %+v, linear scan %+v", s.nodes[j], s.nodes[want])
			}
		}
	})
}
