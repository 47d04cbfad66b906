package scheduler

// candidate is a feasible node with its cached score. rank is the node's
// position in the seeded visiting order; it breaks score ties.
type candidate struct {
	node  int32
	rank  int32
	score float64
}

// feasibleSet is one group's window on the cell: up to limit feasible nodes,
// found by walking the seeded order from a cursor that only moves forward.
// Replicas of a group are identical and nodes only fill up while a group is
// placed, so a node rejected once stays rejected and the walk never
// restarts; after a placement only the chosen node is re-checked and
// re-scored. Placing all replicas of a group costs one pass over the cell
// plus O(limit) per replica.
type feasibleSet struct {
	g      *group
	c      *cell
	order  []int32 // the nodes to walk: c.order, or a gang domain's part of it
	limit  int
	cursor int
	nodes  []candidate
	stats  groupStats // nodes examined, feasible and rejected by each filter
}

func newFeasibleSet(g *group, c *cell, limit int) *feasibleSet {
	limit = max(limit, 1)
	return &feasibleSet{g: g, c: c, order: c.order, limit: limit, nodes: make([]candidate, 0, min(limit, len(c.nodes)))}
}

// fill walks the order until the set holds limit nodes or the cell is
// exhausted.
func (s *feasibleSet) fill() {
	for len(s.nodes) < s.limit && s.cursor < len(s.order) {
		i := s.order[s.cursor]
		if k, reason := s.g.firstReject(s.c, int(i)); k < 0 {
			s.nodes = append(s.nodes, candidate{node: i, rank: int32(s.cursor), score: s.g.score(s.c, int(i))})
			s.stats.feasible++
		} else {
			s.stats.reject(k, reason)
		}
		s.cursor++
	}
	s.stats.examined = s.cursor
}

// best returns the position in s.nodes of the highest score, the earliest
// in the seeded order on ties; false when the set is empty.
func (s *feasibleSet) best() (int, bool) {
	if len(s.g.dynamic) > 0 {
		return s.bestDynamic()
	}
	if len(s.nodes) == 0 {
		return 0, false
	}
	b := 0
	for j := 1; j < len(s.nodes); j++ {
		n, cur := &s.nodes[j], &s.nodes[b]
		if n.score > cur.score || (n.score == cur.score && n.rank < cur.rank) {
			b = j
		}
	}
	return b, true
}

// update re-checks the candidate at position j after a placement on it:
// it is re-scored if it still fits and dropped otherwise.
func (s *feasibleSet) update(j int) {
	i := int(s.nodes[j].node)
	if s.g.check(s.c, i) == "" {
		s.nodes[j].score = s.g.score(s.c, i)
		return
	}
	last := len(s.nodes) - 1
	s.nodes[j] = s.nodes[last]
	s.nodes = s.nodes[:last]
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
