package scheduler

// selection holds a window's candidates and picks the best of them. The
// kind is chosen once per group (selectionFor), by its dynamic terms:
//
//   - candidateHeap: no dynamic terms, so a node's cached score is all of
//     it; a binary heap in selection order, O(log K) per replica;
//   - classes (selectclasses.go): every dynamic term judges a node by its
//     domain's count (spread, self (anti-)affinity); buckets of nodes
//     judged alike, one verdict per bucket;
//   - scanSelection: other dynamic terms (peers about the group's own
//     replicas); the heap's candidates, judged one by one.
//
// Classes and the scan choose the same node (TestPropertyClassesKeepPlans).
type selection interface {
	size() int
	push(cd candidate)
	// best returns the id of the best candidate, false when there is none
	// or the dynamic terms refuse every one.
	best() (int, bool)
	// node is the cell index of candidate id.
	node(id int) int
	// update re-checks candidate id after a placement on its node:
	// re-scored if it still fits, dropped otherwise.
	update(id int)
}

// selectionKind names a selection; strategies may force one for tests.
type selectionKind uint8

const (
	selectAuto selectionKind = iota // what the group's terms allow
	selectHeap
	selectClasses
	selectScan
)

// selectionFor is the selection g's terms allow: the heap without dynamic
// terms, classes when every dynamic term is one classes handle, the scan
// otherwise. force, when not selectAuto, replaces classes by the scan or
// the other way round (differential tests).
func selectionFor(g *group, force selectionKind) selectionKind {
	if len(g.dynamic) == 0 {
		return selectHeap
	}
	if force == selectScan || !classesHandle(g) {
		return selectScan
	}
	return selectClasses
}

// newSelection makes the group's kind of selection for about size
// candidates.
func (g *group) newSelection(c *cell, size int) selection {
	switch g.selects {
	case selectClasses:
		return newClasses(g, c, g.coarseDomains, size)
	case selectScan:
		return &scanSelection{candidateHeap{g: g, c: c, nodes: c.candidates(size)}}
	}
	return &candidateHeap{g: g, c: c, nodes: c.candidates(size)}
}

// candidateHeap keeps candidates as a binary heap in selection order
// (candidate.before), so the best is nodes[0]. Whoever changes a
// candidate's cached score must restore the heap: update does it for the
// node just placed on (no other node's cached score changes).
//
// It does no more ordering than the plan asks for, since most plans place
// one replica from a window of thousands: pushes only append; the first
// best moves the best candidate to the root by one scan (top), and the heap
// is built only when a later best needs it — by sifting the new candidates
// up or, when they outnumber the old, by heapifying all of them; update
// only notes the candidate, re-judged when the window is next asked
// (settle), since nothing changes the cell in between. The root is the
// same either way, since the selection order is total.
type candidateHeap struct {
	g     *group
	c     *cell
	nodes []candidate
	// heaped is how many of nodes, from the first, form a heap; top is set
	// when instead only nodes[0] is known to be the best of all.
	heaped int
	top    bool
	// stale is 1 + the candidate update noted, not re-judged yet; 0: none.
	stale int
}

func (h *candidateHeap) size() int {
	h.settle()
	return len(h.nodes)
}
func (h *candidateHeap) node(j int) int { return int(h.nodes[j].node) }
func (h *candidateHeap) best() (int, bool) {
	h.settle()
	if n := len(h.nodes); h.heaped == 0 && !h.top && n > 1 {
		b := 0
		for j := 1; j < n; j++ {
			if h.nodes[j].before(&h.nodes[b]) {
				b = j
			}
		}
		h.swap(0, b)
		h.top = true
		return 0, true
	}
	h.ordered()
	return 0, len(h.nodes) > 0
}
func (h *candidateHeap) push(cd candidate) { h.nodes = append(h.nodes, cd) }

// ordered restores the heap over every candidate pushed.
func (h *candidateHeap) ordered() {
	n := len(h.nodes)
	switch {
	case h.top:
		heapInit(h) // the best stays at the root
		h.top = false
	case h.heaped == n:
		return
	case n-h.heaped > h.heaped:
		heapInit(h)
	default:
		for j := h.heaped; j < n; j++ {
			heapUp(h, j)
		}
	}
	h.heaped = n
}

// update notes that candidate j, which best just returned, is to be
// re-judged after the placement on its node.
func (h *candidateHeap) update(j int) { h.stale = j + 1 }

// settle re-judges the candidate update noted: re-scored if it still
// fits, dropped otherwise.
func (h *candidateHeap) settle() {
	if h.stale == 0 {
		return
	}
	j := h.stale - 1
	h.stale = 0
	if h.top {
		h.ordered() // the best, j, stays at the root
	}
	i := int(h.nodes[j].node)
	if h.g.check(h.c, i) == "" {
		h.nodes[j].score = h.g.score(h.c, i)
		h.fix(j)
		return
	}
	h.remove(j)
}

func (h *candidateHeap) remove(j int) {
	last := len(h.nodes) - 1
	if j != last {
		h.nodes[j] = h.nodes[last]
	}
	h.nodes = h.nodes[:last]
	h.heaped = last
	if j < last {
		h.fix(j)
	}
}

func (h *candidateHeap) len() int           { return len(h.nodes) }
func (h *candidateHeap) less(a, b int) bool { return h.nodes[a].before(&h.nodes[b]) }
func (h *candidateHeap) swap(a, b int)      { h.nodes[a], h.nodes[b] = h.nodes[b], h.nodes[a] }

// fix restores the heap after the candidate at j changed.
func (h *candidateHeap) fix(j int) { heapFix(h, j) }

// scanSelection judges the dynamic terms now, on every candidate, since
// the last placement may have moved them on nodes it did not touch: O(K)
// per replica. It keeps the heap's storage and update.
type scanSelection struct{ candidateHeap }

func (s *scanSelection) best() (int, bool) {
	s.settle()
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
	return b, b >= 0
}
