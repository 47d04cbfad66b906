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
// The candidates are kept as a binary heap in selection order (before), so
// the best is nodes[0]: placing all replicas of a group costs one pass over
// the cell plus O(log limit) per replica. Whoever changes a candidate's
// cached score must restore the heap: update does it for the node just
// placed on (no other node's cached score changes). A group with
// dynamic terms (spread, rules about its own replicas), whose part of the
// score is not cached, keeps its candidates in classes instead (cl,
// classes.go), or, for terms classes do not handle, selects by a scan
// (bestDynamic).
type feasibleSet struct {
	g      *group
	c      *cell
	order  []int32 // the nodes to walk: c.order, or a gang domain's part of it
	limit  int
	cursor int
	nodes  []candidate // a heap in selection order
	stats  groupStats  // nodes examined, feasible and rejected by each filter
	// cl holds the candidates instead of nodes when the group has
	// dynamic terms that classes handle (classes.go).
	cl *classes
}

func newFeasibleSet(g *group, c *cell, limit int) *feasibleSet {
	limit = max(limit, 1)
	return (&feasibleSet{g: g, c: c, limit: limit}).walk(c.order)
}

// walk sets the nodes the set walks: c.order, or a part of it.
func (s *feasibleSet) walk(order []int32) *feasibleSet {
	s.order, s.cursor = order, 0
	if len(s.g.dynamic) > 0 && !s.g.scanDynamic {
		if s.cl = newClasses(s.g, s.c, s.g.coarseDomains, min(s.limit, len(order))); s.cl != nil {
			return s
		}
	}
	s.nodes = make([]candidate, 0, min(s.limit, len(order)))
	return s
}

// size is the number of candidates in the set.
func (s *feasibleSet) size() int {
	if s.cl != nil {
		return s.cl.alive
	}
	return len(s.nodes)
}

// node is the node of the candidate best returned.
func (s *feasibleSet) node(j int) int {
	if s.cl != nil {
		return int(s.cl.pool[j].node)
	}
	return int(s.nodes[j].node)
}

// fill walks the order until the set holds limit nodes or the cell is
// exhausted.
func (s *feasibleSet) fill() {
	for s.size() < s.limit && s.cursor < len(s.order) {
		i := s.order[s.cursor]
		if k, reason := s.g.firstReject(s.c, int(i)); k < 0 {
			cd := candidate{node: i, rank: int32(s.cursor), score: s.g.score(s.c, int(i))}
			if s.cl != nil {
				s.cl.push(cd)
			} else {
				s.push(cd)
			}
			s.stats.feasible++
		} else {
			s.stats.reject(k, reason)
		}
		s.cursor++
	}
	s.stats.examined = s.cursor
}

// best returns the candidate with the highest score, the earliest in the
// seeded order on ties (its position in s.nodes, or its id in s.cl); false
// when the set is empty.
func (s *feasibleSet) best() (int, bool) {
	if s.cl != nil {
		return s.bestClassed()
	}
	if len(s.g.dynamic) > 0 {
		return s.bestDynamic()
	}
	return 0, len(s.nodes) > 0
}

// update re-checks the candidate j after a placement on it: it is
// re-scored if it still fits and dropped otherwise.
func (s *feasibleSet) update(j int) {
	if s.cl != nil {
		s.cl.update(int32(j))
		return
	}
	i := int(s.nodes[j].node)
	if s.g.check(s.c, i) == "" {
		s.nodes[j].score = s.g.score(s.c, i)
		s.fix(j)
		return
	}
	s.remove(j)
}

func (s *feasibleSet) push(cd candidate) {
	s.nodes = append(s.nodes, cd)
	s.up(len(s.nodes) - 1)
}

func (s *feasibleSet) remove(j int) {
	last := len(s.nodes) - 1
	if j != last {
		s.nodes[j] = s.nodes[last]
	}
	s.nodes = s.nodes[:last]
	if j < last {
		s.fix(j)
	}
}

// fix restores the heap after the candidate at j changed.
func (s *feasibleSet) fix(j int) {
	if !s.down(j) {
		s.up(j)
	}
}

func (s *feasibleSet) up(j int) {
	h := s.nodes
	for j > 0 {
		parent := (j - 1) / 2
		if !h[j].before(&h[parent]) {
			return
		}
		h[j], h[parent] = h[parent], h[j]
		j = parent
	}
}

// down sifts the candidate at j down and reports whether it moved.
func (s *feasibleSet) down(j int) bool {
	h, start := s.nodes, j
	for {
		child := 2*j + 1
		if child >= len(h) {
			break
		}
		if r := child + 1; r < len(h) && h[r].before(&h[child]) {
			child = r
		}
		if !h[child].before(&h[j]) {
			break
		}
		h[j], h[child] = h[child], h[j]
		j = child
	}
	return j > start
}

// bestDynamic is best for a group with dynamic terms (spread, rules about
// its own replicas): they are evaluated now, on every candidate, since the
// last placement may have moved them on nodes it did not touch. When every
// candidate is blocked by one, the window widens by another limit's worth
// of nodes until one passes or the cell is exhausted, so "does not fit"
// still means that no node fits.
func (s *feasibleSet) bestDynamic() (int, bool) {
	step := s.limit
	for {
		b, bestScore := -1, 0.0
		for j := range s.nodes {
			n := &s.nodes[j]
			reason, extra := s.g.verdict(s.c, int(n.node))
			if reason != "" {
				continue
			}
			total := n.score + extra
			if b < 0 || total > bestScore || (total == bestScore && n.rank < s.nodes[b].rank) {
				b, bestScore = j, total
			}
		}
		if b >= 0 {
			return b, true
		}
		if s.cursor >= len(s.order) {
			return 0, false
		}
		s.limit += step
		s.fill()
	}
}

// bestClassed is bestDynamic over the set's classes: the same choice, with
// the dynamic terms evaluated once per bucket instead of once per
// candidate.
func (s *feasibleSet) bestClassed() (int, bool) {
	step := s.limit
	for {
		if id, ok := s.cl.best(); ok {
			return int(id), true
		}
		if s.cursor >= len(s.order) {
			return 0, false
		}
		s.limit += step
		s.fill()
	}
}
