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
}

func newFeasibleSet(g *group, c *cell, limit int) *feasibleSet {
	limit = max(limit, 1)
	return (&feasibleSet{g: g, c: c, limit: limit}).walk(c.order)
}

// walk sets the nodes the set walks: c.order, or a part of it.
func (s *feasibleSet) walk(order []int32) *feasibleSet {
	s.order, s.cursor = order, 0
	s.nodes = make([]candidate, 0, min(s.limit, len(order)))
	return s
}

// fill walks the order until the set holds limit nodes or the cell is
// exhausted.
func (s *feasibleSet) fill() {
	for len(s.nodes) < s.limit && s.cursor < len(s.order) {
		i := s.order[s.cursor]
		if s.g.check(s.c, int(i)) == "" {
			s.nodes = append(s.nodes, candidate{node: i, rank: int32(s.cursor), score: s.g.score(&s.c.nodes[i])})
		}
		s.cursor++
	}
}

// best returns the position in s.nodes of the highest score, the earliest
// in the seeded order on ties; false when the set is empty.
func (s *feasibleSet) best() (int, bool) {
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
		s.nodes[j].score = s.g.score(&s.c.nodes[i])
		return
	}
	last := len(s.nodes) - 1
	s.nodes[j] = s.nodes[last]
	s.nodes = s.nodes[:last]
}
