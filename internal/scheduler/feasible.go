package scheduler

// candidate is a feasible node with its cached score. rank is the node's
// position in the seeded visiting order; it breaks score ties.
type candidate struct {
	node  int32
	rank  int32
	score float64
}

// before is the selection order: the higher score first, on ties the node
// earlier in the seeded order. Ranks are distinct within a set, so this
// is a total order and the best candidate is unique.
func (a *candidate) before(b *candidate) bool {
	return a.score > b.score || (a.score == b.score && a.rank < b.rank)
}

// feasibleSet is one group's window on the cell: up to limit feasible nodes,
// found by walking the seeded order from a cursor that only moves forward.
// Replicas of a group are identical and nodes only fill up while a group is
// placed, so a node rejected once stays rejected and the walk never
// restarts; after a placement only the chosen node is re-checked and
// re-scored.
//
// How the candidates are held and the best one picked is the group's
// selection (selection.go), chosen once per group: a heap of cached
// scores, classes of nodes the dynamic terms judge alike (selectclasses.go), or
// a scan. The window only walks, counts and widens.
type feasibleSet struct {
	g      *group
	c      *cell
	order  []int32 // the nodes to walk: c.order, or a gang domain's part of it
	limit  int
	cursor int
	sel    selection
	stats  groupStats // nodes examined, feasible and rejected by each filter
}

func newFeasibleSet(g *group, c *cell, limit int) *feasibleSet {
	return openWindow(g, c, limit, c.order)
}

// openWindow returns g's window of up to limit candidates on the nodes of
// order (the cell's seeded order, or a part of it).
func openWindow(g *group, c *cell, limit int, order []int32) *feasibleSet {
	s := &feasibleSet{g: g, c: c, limit: max(limit, 1), order: order}
	s.sel = g.newSelection(c, min(s.limit, len(order)))
	return s
}

// size is the number of candidates in the set.
func (s *feasibleSet) size() int { return s.sel.size() }

// node is the node of the candidate best returned.
func (s *feasibleSet) node(j int) int { return s.sel.node(j) }

// fill walks the order until the set holds limit nodes or the cell is
// exhausted.
func (s *feasibleSet) fill() {
	g, c := s.g, s.c
	// Every push adds one candidate and nothing else changes the
	// selection's size while the window walks.
	room := s.limit - s.sel.size()
	for room > 0 && s.cursor < len(s.order) {
		i := int(s.order[s.cursor])
		var k int
		var reason string
		// A verdict the score cache holds answers for the node-local
		// stages (scorecache.go); otherwise the chain runs.
		v := g.judged(c, i)
		if v != nil {
			k, reason = g.replay(c, i, v)
		} else {
			k, reason = g.firstRejectOn(c, c.at(i), i)
		}
		if k < 0 {
			s.sel.push(candidate{node: int32(i), rank: int32(s.cursor), score: g.scoreWith(c, i, v)})
			s.stats.feasible++
			room--
		} else {
			s.stats.reject(k, reason, c, i)
		}
		s.cursor++
	}
	s.stats.examined = s.cursor
}

// best returns the candidate with the highest score, the earliest in the
// seeded order on ties (its id in the selection); false when no node
// fits. A selection with dynamic terms may refuse every candidate it
// holds; the window then widens by another limit's worth of nodes until
// one passes or the cell is exhausted, so "does not fit" still means that
// no node fits. (A heap refuses only when empty, which the walk reaches
// only at the end of the order.)
func (s *feasibleSet) best() (int, bool) {
	step := s.limit
	for {
		if j, ok := s.sel.best(); ok {
			return j, true
		}
		if s.cursor >= len(s.order) {
			return 0, false
		}
		s.limit += step
		s.fill()
	}
}

// update re-checks the candidate j after a placement on it: it is
// re-scored if it still fits and dropped otherwise.
func (s *feasibleSet) update(j int) { s.sel.update(j) }

// rejectedAll reports whether the window walked the whole cell and every
// node failed the filter chain, no victim budget standing in for a
// reason: then each node's reason is the one the walk counted.
func (s *feasibleSet) rejectedAll() bool {
	return s.stats.feasible == 0 && s.cursor == len(s.order) && len(s.order) == s.c.size() && !s.c.budgets.blocks(s.g)
}
