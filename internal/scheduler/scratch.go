package scheduler

import "sync/atomic"

// Scratch is working memory Schedule may reuse from one call to the next.
// A caller that schedules many evaluations one after another (a worker,
// the bench, the simulator) keeps one and passes it in Options, so that
// the per-plan tables of a large cell — a slot per node, the seeded order,
// node states — are not allocated again for every evaluation; at 100k
// nodes they were most of the garbage the engine made. It never changes
// a plan: everything taken from it is written before it is read. One
// Scratch serves one call at a time; a call that finds it in use by
// another allocates its own memory instead. The zero value is ready.
type Scratch struct {
	// CachedVerdicts bounds the score cache (scorecache.go), in node
	// verdicts of 24 bytes over all classes; 0: about a million. A caller
	// that meets many classes on a large cell (the simulator's Google
	// replays) keeps more.
	CachedVerdicts int

	busy   atomic.Bool
	slot   []int32 // all zero while idle
	order  []int32
	chunks [][]nodeState // cleared while idle
	// cache keeps verdicts and scores from call to call, for States that
	// say which nodes changed (scorecache.go).
	cache scoreCache
	// lists are candidate lists to lend to the plan's windows (empty
	// while idle).
	lists [][]candidate
}

// take lends the scratch to a cell of n nodes, or returns false when
// another call holds it.
func (s *Scratch) take(c *cell, n int) bool {
	if s == nil || !s.busy.CompareAndSwap(false, true) {
		return false
	}
	if cap(s.slot) < n {
		s.slot = make([]int32, n)
	}
	if cap(s.order) < n {
		s.order = make([]int32, n)
	}
	c.slot, c.order, c.spare = s.slot[:n], s.order[:n], s.chunks
	c.scratch = s
	return true
}

// release gives the cell's memory back to its scratch, clearing what the
// next call must find zero, in time proportional to what this one used.
func (c *cell) release() {
	s := c.scratch
	if s == nil {
		return
	}
	for _, i := range c.touched {
		c.slot[i] = 0
	}
	for k, chunk := range c.states {
		clear(chunk[:min(stateChunk, c.used-k*stateChunk)])
	}
	s.chunks = append(c.spare, c.states...)
	for _, l := range c.lent {
		s.lists = append(s.lists, l[:0])
	}
	c.lent = c.lent[:0]
	c.scratch, c.slot, c.order, c.states, c.spare, c.cache = nil, nil, nil, nil, nil, nil
	s.busy.Store(false)
}

// candidates returns an empty candidate list for about size candidates:
// one of the scratch's when the cell has a scratch, given back when the
// cell is released.
func (c *cell) candidates(size int) []candidate {
	s := c.scratch
	if s == nil {
		return make([]candidate, 0, size)
	}
	var l []candidate
	if k := len(s.lists); k > 0 {
		l, s.lists = s.lists[k-1], s.lists[:k-1]
	}
	if cap(l) < size {
		l = make([]candidate, 0, size)
	}
	c.lent = append(c.lent, l)
	return l
}
