package cluster

import "github.com/strata-dev/strata/internal/sim/trace"

// jobNodes is where one job's pods run: per node, its live allocations and
// those with the different-machine constraint. Once the job has a
// DistinctNode pod it also keeps two bitsets over the nodes — runs a pod of
// the job, runs a DistinctNode pod of the job — so that a placement
// testing many candidate nodes pays one bit test per node, not a map
// lookup.
type jobNodes struct {
	count    map[int32]jobCount
	distinct int32 // live DistinctNode allocations
	any      bitset
	flagged  bitset
}

type jobCount struct{ all, distinct int32 }

// bitset is a set of node indices.
type bitset []uint64

func newBitset(n int) bitset    { return make(bitset, (n+63)/64) }
func (b bitset) has(i int) bool { return b[i>>6]&(1<<(uint(i)&63)) != 0 }
func (b bitset) set(i int, on bool) {
	if on {
		b[i>>6] |= 1 << (uint(i) & 63)
	} else {
		b[i>>6] &^= 1 << (uint(i) & 63)
	}
}

// bits makes the job's bitsets, from its counts, on first use.
func (j *jobNodes) bits(nodes int) {
	if j.any != nil {
		return
	}
	j.any, j.flagged = newBitset(nodes), newBitset(nodes)
	for i, n := range j.count {
		j.any.set(int(i), n.all > 0)
		j.flagged.set(int(i), n.distinct > 0)
	}
}

// Excluder returns the test of the nodes where p would break a
// different-machine constraint (trace.Pod.DistinctNode): p has it and the
// node runs a pod of p's job, or the node runs a pod of p's job that has
// it. It is nil when no node can be excluded. The test is valid until the
// cluster next changes.
func (c *Cluster) Excluder(p *trace.Pod) func(node int) bool {
	if p.Job == 0 {
		return nil
	}
	j := c.jobs[p.Job]
	switch {
	case j == nil || (!p.DistinctNode && j.distinct == 0):
		return nil
	case p.DistinctNode:
		j.bits(len(c.nodes))
		return j.any.has
	}
	j.bits(len(c.nodes))
	return j.flagged.has
}

// Conflicts reports whether placing p on node i would break a
// different-machine constraint (see Excluder).
func (c *Cluster) Conflicts(i int, p *trace.Pod) bool {
	ex := c.Excluder(p)
	return ex != nil && ex(i)
}

// countJob adds d to the job tallies of a pod placed on node.
func (c *Cluster) countJob(p *trace.Pod, node int, d int32) {
	if p.Job == 0 {
		return
	}
	if c.jobs == nil {
		c.jobs = map[int64]*jobNodes{}
	}
	j := c.jobs[p.Job]
	if j == nil {
		j = &jobNodes{count: map[int32]jobCount{}}
		c.jobs[p.Job] = j
	}
	n := j.count[int32(node)]
	n.all += d
	if p.DistinctNode {
		n.distinct += d
		j.distinct += d
		j.bits(len(c.nodes))
	}
	if j.any != nil {
		j.any.set(node, n.all > 0)
		j.flagged.set(node, n.distinct > 0)
	}
	switch {
	case n.all > 0:
		j.count[int32(node)] = n
	case len(j.count) <= 1:
		delete(c.jobs, p.Job) // its last pod: nothing of the job is left
	default:
		delete(j.count, int32(node))
	}
}
