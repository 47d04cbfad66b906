package scheduler

import (
	"slices"
	"strings"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/topology"
)

// domainIndex maps every node of the cell to its domain of one topology
// key (or network level), as small integers, so that counting allocations
// per rack or zone costs an array access rather than a label lookup. It
// depends only on the nodes' ids and labels, so a NodeIndex keeps one per
// key for every plan of its nodes; it is never modified once built.
type domainIndex struct {
	of    []int32  // node → domain; -1 when the node has no such label
	names []string // domain → its value, for reasons
	// members lists each domain's nodes, in node order: domain d's are
	// nodes[start[d]:start[d+1]].
	start, nodes []int32
}

// members returns domain d's nodes, in node order.
func (ix *domainIndex) members(d int) []int32 { return ix.nodes[ix.start[d]:ix.start[d+1]] }

// index returns the cell's domain index for key: the NodeIndex's, or one
// built on first use and kept for the plan (labels do not change during
// one).
func (c *cell) index(key string) *domainIndex {
	return c.cachedIndex(key, func(n *api.Node) (string, bool) { return topology.Domain(key, n.ID, n.Labels) })
}

// levelIndex is index for a network level: a node's domain is the first of
// the level's keys it has.
func (c *cell) levelIndex(l topology.Level) *domainIndex {
	return c.cachedIndex("net:"+strings.Join(l.Keys, "|"), func(n *api.Node) (string, bool) {
		return topology.LevelDomain(l, n.ID, n.Labels)
	})
}

func (c *cell) cachedIndex(cacheKey string, domainOf func(*api.Node) (string, bool)) *domainIndex {
	if ix, ok := c.rel.indexes[cacheKey]; ok {
		return ix
	}
	var ix *domainIndex
	if c.nodeIndex != nil {
		ix = c.nodeIndex.domains(cacheKey, domainOf)
	} else {
		ix = newDomainIndex(c.nodes, domainOf)
	}
	if c.rel.indexes == nil {
		c.rel.indexes = make(map[string]*domainIndex)
	}
	c.rel.indexes[cacheKey] = ix
	return ix
}

func newDomainIndex(nodes []*api.Node, domainOf func(*api.Node) (string, bool)) *domainIndex {
	ix := &domainIndex{}
	ix.of, ix.names = internValues(len(nodes), func(i int) (string, bool) { return domainOf(nodes[i]) })
	size := make([]int32, len(ix.names))
	for _, d := range ix.of {
		if d >= 0 {
			size[d]++
		}
	}
	ix.start = make([]int32, len(ix.names)+1)
	for d, n := range size {
		ix.start[d+1] = ix.start[d] + n
	}
	ix.nodes = make([]int32, ix.start[len(ix.names)])
	next := slices.Clone(ix.start[:len(ix.names)])
	for i, d := range ix.of {
		if d >= 0 {
			ix.nodes[next[d]] = int32(i)
			next[d]++
		}
	}
	return ix
}

// target names the allocations a rule is about: every group of a workload,
// or one group of it.
// Relations are about workloads of the placing workload's namespace.
type target struct{ namespace, workload, group string }

func (t target) matches(a *api.Allocation) bool {
	return a.Workload == t.workload && (t.group == "" || a.Group == t.group) && api.NamespaceOf(a.Namespace) == t.namespace
}

// String is "web" or "web/api".
func (t target) String() string {
	if t.group == "" {
		return t.workload
	}
	return t.workload + "/" + t.group
}

// tally counts a target's live allocations per domain of one index. A
// tally whose target includes the workload being scheduled is registered
// with the cell and follows the plan: every placement (and its rollback)
// moves its counts, so a rule about the group's own replicas sees those
// placed a moment ago.
type tally struct {
	ix     *domainIndex
	t      target
	counts []int32
	total  int
	// placed is total less the allocations on nodes without the key.
	placed int

	// Spread bookkeeping: the domains that count for the minimum and the
	// minimum itself, kept incrementally (recomputed only when the last
	// domain at the minimum grows).
	eligible []bool
	min      int32
	atMin    int

	// log lists the domains whose count moved, once logged is set: the
	// candidate classes of a feasible set (selectclasses.go) follow it.
	log    []int32
	logged bool
}

// newTally counts t's live allocations on ix, leaving out what this plan
// stops. When t includes the workload being placed, the tally is
// registered to follow this plan's placements.
func (c *cell) newTally(ix *domainIndex, t target, self bool) *tally {
	tl := &tally{ix: ix, t: t, counts: make([]int32, len(ix.names))}
	for _, a := range c.st.AllocsByWorkload(t.namespace, t.workload) {
		if !t.matches(a) || !live(a) || c.stopping[a.ID] {
			continue
		}
		if i := c.find(a.NodeID); i >= 0 {
			tl.add(i, 1)
		}
	}
	for _, p := range c.rel.log {
		if t.matches(p.alloc) {
			tl.add(int(p.node), 1)
		}
	}
	if self {
		c.rel.tallies = append(c.rel.tallies, tl)
	}
	return tl
}

// tallyOf returns a tally of t on ix for an affinity or peer term: when t
// is about the workload being placed, the plan's one tally of t on ix,
// shared by the terms of all its groups (the gangs of a training job that
// want each other near count the same placements); otherwise a new one.
// Sharing keeps the counts exact: the plan stops none of its own
// workload's allocations after the first placement, and every placement
// and rollback moves a shared tally once. Spread tallies are not shared:
// each tracks the minimum over its own group's eligible domains.
func (c *cell) tallyOf(ix *domainIndex, t target, self bool) *tally {
	if !self || c.rel.fresh {
		return c.newTally(ix, t, self)
	}
	key := tallyKey{ix: ix, t: t}
	if tl, ok := c.rel.shared[key]; ok {
		return tl
	}
	tl := c.newTally(ix, t, true)
	if c.rel.shared == nil {
		c.rel.shared = make(map[tallyKey]*tally)
	}
	c.rel.shared[key] = tl
	return tl
}

type tallyKey struct {
	ix *domainIndex
	t  target
}

// add moves node i's domain count by delta.
func (tl *tally) add(i int, delta int32) {
	d := tl.ix.of[i]
	tl.total += int(delta)
	if d < 0 {
		return
	}
	tl.placed += int(delta)
	before := tl.counts[d]
	tl.counts[d] += delta
	if tl.logged {
		tl.log = append(tl.log, d)
	}
	if tl.eligible == nil || !tl.eligible[d] {
		return
	}
	switch after := tl.counts[d]; {
	case after < tl.min:
		tl.min, tl.atMin = after, 1
	case after == tl.min:
		tl.atMin++
	case before == tl.min:
		if tl.atMin--; tl.atMin == 0 {
			tl.recomputeMin()
		}
	}
}

// count is the target's allocations in node i's domain, -1 when the node
// has no domain of the key.
func (tl *tally) count(i int) int32 {
	if d := tl.ix.of[i]; d >= 0 {
		return tl.counts[d]
	}
	return -1
}

// trackMin makes the tally keep the minimum over the eligible domains.
func (tl *tally) trackMin(eligible []bool) {
	tl.eligible = eligible
	tl.recomputeMin()
}

func (tl *tally) recomputeMin() {
	tl.min, tl.atMin = 0, 0
	first := true
	for d, ok := range tl.eligible {
		if !ok {
			continue
		}
		switch c := tl.counts[d]; {
		case first || c < tl.min:
			tl.min, tl.atMin, first = c, 1, false
		case c == tl.min:
			tl.atMin++
		}
	}
}

// relationBook is what the relation terms of one plan keep: the domain
// indexes by key, the tallies that follow the plan's placements, the self
// tallies shared by the plan's groups, and the log of the plan's
// placements a new tally counts. The cell tells it of every placement and
// rollback (placed, unplaced) and knows nothing else of it.
type relationBook struct {
	indexes map[string]*domainIndex
	tallies []*tally            // registered: they follow the plan
	shared  map[tallyKey]*tally // self tallies of affinity and peer terms
	// fresh (strategies, tests) gives every term a tally of its own.
	fresh bool
	// log lists this plan's placements in order; a trial's rollback takes
	// its own off the end.
	log []placement
}

// placement is one allocation this plan placed, on node.
type placement struct {
	node  int32
	alloc *api.Allocation
}

// placed records a placement on node i and moves every registered tally.
func (b *relationBook) placed(i int, a *api.Allocation) {
	b.log = append(b.log, placement{node: int32(i), alloc: a})
	b.follow(i, a, 1)
}

// unplaced undoes the latest placement, a on node i.
func (b *relationBook) unplaced(i int, a *api.Allocation) {
	b.log = b.log[:len(b.log)-1]
	b.follow(i, a, -1)
}

// follow moves every registered tally for a placement (delta 1) or its
// rollback (delta -1) on node i.
func (b *relationBook) follow(i int, a *api.Allocation, delta int32) {
	for _, tl := range b.tallies {
		if tl.t.matches(a) {
			tl.add(i, delta)
		}
	}
}
