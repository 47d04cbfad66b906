package policy

import (
	"math"
	"slices"

	"github.com/strata-dev/strata/internal/sim/cluster"
	"github.com/strata-dev/strata/internal/sim/freeindex"
	"github.com/strata-dev/strata/internal/sim/trace"
)

// CPUOnlyScorer is implemented by scorers whose score on a cell without
// GPUs is a function of a node's free CPU alone (every GPU term vanishes
// there): CPUOnly returns that function for pod p, which must be
// non-increasing in free CPU (a fuller node scores at least as well), or
// nil when every node scores the same. The Selector then finds the best
// node through a freeindex.Index instead of scoring every node.
// TestCPUOnlyScoresAreTheScores holds every implementation to Score.
type CPUOnlyScorer interface {
	CPUOnly(c *cluster.Cluster, p *trace.Pod) func(cpuFree int64) float64
}

// uniformTries is how many uniform draws among the up nodes a random
// choice makes before it lists the feasible nodes and draws among them.
const uniformTries = 32

// placeIndexed places p through the index when it can say exactly what the
// scan would: the cell has no GPUs, the scorer is a CPUOnlyScorer and the
// tie rule is the rank (or first) rule, or the random rule with a constant
// score. It reports handled=false otherwise, and the caller scans.
//
// With a constant score the answer is the lowest-ranked feasible node (a first
// fit in the rank order); with a non-increasing score s it is the
// lowest-ranked feasible node among those with the best score, which are
// the feasible nodes whose free CPU lies between the least free CPU of any
// feasible node (x*) and the most free CPU that still scores s(x*) (found
// by bisection, s being monotone). BestFit's min-max normalisation keeps
// the order of the raw scores and sends exactly the raw maxima to 100 (all
// to 0 when they are equal), so its best nodes are the raw best ones.
// Under the random rule the draw is uniform over the feasible nodes: up to
// uniformTries uniform draws among the up nodes, then one among the
// feasible nodes listed in node order (this is how the random rule draws
// on a cell without GPUs, with or without the index; with GPUs it keeps
// the scan's reservoir, one draw per feasible node, so that the
// published-table figures stay what they are).
func (sel *Selector) placeIndexed(c *cluster.Cluster, p *trace.Pod) (pl cluster.Placement, ok, handled bool) {
	cs, can := sel.Scorer.(CPUOnlyScorer)
	switch {
	case !can || c.MaxNode().GPUMilli != 0:
		return pl, false, false
	case p.NumGPU > 0: // no node has a GPU
		return pl, false, !sel.noIndex
	}
	score := cs.CPUOnly(c, p)
	var node int
	switch {
	case sel.Tie == TieRandom && score != nil:
		return pl, false, false
	case sel.Tie == TieRandom:
		// The draw is the same with or without the index; without it
		// (noIndex, the tests' reference) the up and feasible nodes are
		// found by a scan.
		var nodes upNodes = scanNodes{c}
		if !sel.noIndex {
			ix := sel.freeIndex(c)
			ix.Sync(c)
			nodes = indexNodes{ix}
		}
		node, ok = sel.drawFeasible(c, p, nodes)
		if !ok {
			return pl, false, true
		}
		return cluster.PlacementFor(node, p, sel.Scorer.PickGPUs(c, node, p)), true, true
	case sel.noIndex:
		return pl, false, false
	}
	ix := sel.freeIndex(c)
	ix.Sync(c)
	skip := freeindex.Skip(c.Excluder(p)) // nil when no node is excluded
	switch {
	case score == nil:
		node, ok = ix.FirstByRank(p.CPUMilli, math.MaxInt64, p.MemoryMiB, skip)
	default:
		var least int64
		if least, ok = ix.MinCPU(p.CPUMilli, p.MemoryMiB, skip); ok {
			most, _ := ix.MaxCPU()
			node, ok = ix.FirstByRank(least, lastScoring(score, least, most), p.MemoryMiB, skip)
		}
	}
	if !ok {
		return pl, false, true
	}
	return cluster.PlacementFor(node, p, sel.Scorer.PickGPUs(c, node, p)), true, true
}

// lastScoring is the largest x in [lo, hi] with score(x) == score(lo), for
// a non-increasing score.
func lastScoring(score func(int64) float64, lo, hi int64) int64 {
	want := score(lo)
	for lo < hi { // invariant: score(lo) == want
		mid := lo + (hi-lo+1)/2
		if score(mid) >= want {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// freeIndex returns the selector's index for c, made on first use with the
// tie rule's node ranks.
func (sel *Selector) freeIndex(c *cluster.Cluster) *freeindex.Index {
	if sel.index == nil || sel.indexNodes != c.NumNodes() {
		var rank []int32
		if sel.Tie == TieRank || sel.Tie == "" {
			rank = sel.ranks(c.NumNodes())
		} else {
			rank = make([]int32, c.NumNodes())
			for i := range rank {
				rank[i] = int32(i)
			}
		}
		sel.index, sel.indexNodes = freeindex.New(rank), c.NumNodes()
	}
	return sel.index
}

// upNodes is what a uniform draw needs to know of the up nodes; the index
// answers it, and so does a scan (the reference the tests compare with).
type upNodes interface {
	up() int
	upNode(k int) int // the k-th up node in node order
	feasible(c *cluster.Cluster, p *trace.Pod, into []int) []int
}

type indexNodes struct{ ix *freeindex.Index }

func (x indexNodes) up() int          { return x.ix.Up() }
func (x indexNodes) upNode(k int) int { return x.ix.UpNode(k) }
func (x indexNodes) feasible(c *cluster.Cluster, p *trace.Pod, into []int) []int {
	x.ix.Each(p.CPUMilli, p.MemoryMiB, nil, func(i int) { // Fits checks the job constraint
		if c.Fits(i, p) {
			into = append(into, i)
		}
	})
	slices.Sort(into)
	return into
}

type scanNodes struct{ c *cluster.Cluster }

func (s scanNodes) up() int {
	n := 0
	for i := 0; i < s.c.NumNodes(); i++ {
		if s.c.Node(i).Up {
			n++
		}
	}
	return n
}

func (s scanNodes) upNode(k int) int {
	for i := 0; i < s.c.NumNodes(); i++ {
		if s.c.Node(i).Up {
			if k == 0 {
				return i
			}
			k--
		}
	}
	return -1
}

func (s scanNodes) feasible(c *cluster.Cluster, p *trace.Pod, into []int) []int {
	for i := 0; i < c.NumNodes(); i++ {
		if c.Fits(i, p) {
			into = append(into, i)
		}
	}
	return into
}

// drawFeasible draws a feasible node uniformly: a uniform draw among the up
// nodes is kept when it fits (each feasible node equally likely), and after
// uniformTries misses the feasible nodes are listed and one of them drawn.
func (sel *Selector) drawFeasible(c *cluster.Cluster, p *trace.Pod, nodes upNodes) (int, bool) {
	up := nodes.up()
	if up == 0 {
		return -1, false
	}
	for try := 0; try < uniformTries; try++ {
		if i := nodes.upNode(sel.rng.IntN(up)); c.Fits(i, p) {
			return i, true
		}
	}
	sel.nodes = nodes.feasible(c, p, sel.nodes[:0])
	if len(sel.nodes) == 0 {
		return -1, false
	}
	return sel.nodes[sel.rng.IntN(len(sel.nodes))], true
}
