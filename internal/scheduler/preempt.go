package scheduler

import (
	"fmt"
	"slices"
	"strings"

	"github.com/strata-dev/strata/api"
)

// victimSet is the cheapest way found to make room for one replica on one
// node: the allocations to evict (none when the node fits as is).
type victimSet struct {
	node    int
	rank    int // position in the walked order; the last tie-break
	victims []*api.Allocation
	maxPrio int
	lost    float64 // work lost: victims' share of the node, summed over dimensions
}

// cheaper orders victim sets: fewer victims, then a lower highest victim
// priority, then less work lost, then earlier in the seeded order.
func (a *victimSet) cheaper(b *victimSet) bool {
	switch {
	case len(a.victims) != len(b.victims):
		return len(a.victims) < len(b.victims)
	case a.maxPrio != b.maxPrio:
		return a.maxPrio < b.maxPrio
	case a.lost != b.lost:
		return a.lost < b.lost
	}
	return a.rank < b.rank
}

// preemptor places replicas of one group by evicting lower-priority work,
// once the group's feasible set has run dry. It works out every node's
// cheapest victim set once and afterwards only the node it last used, since
// only that node changed.
type preemptor struct {
	p     *placer
	g     *group
	order []int32
	sets  []victimSet // one per node where preemption can make room
	ready bool
}

func newPreemptor(p *placer, g *group, order []int32) *preemptor {
	return &preemptor{p: p, g: g, order: order}
}

// place puts one replica on the node with the cheapest victim set, evicting
// the victims in the same plan, and reports whether there was one.
func (pr *preemptor) place(intent placeIntent) bool {
	if !pr.ready {
		for rank, i := range pr.order {
			if s, ok := pr.victimsOn(int(i), rank); ok {
				pr.sets = append(pr.sets, s)
			}
		}
		pr.ready = true
	}
	if len(pr.sets) == 0 {
		return false
	}
	b := 0
	for j := 1; j < len(pr.sets); j++ {
		if pr.sets[j].cheaper(&pr.sets[b]) {
			b = j
		}
	}
	s := pr.sets[b]
	c, w := pr.p.cell, pr.p.w
	id := pr.p.ids.next()
	if len(s.victims) > 0 {
		reason := fmt.Sprintf("preempted by %s/%s[%d] (priority %d)", w.Name, pr.g.tg.Name, intent.index, w.Priority)
		c.evict(s.node, s.victims, reason, id)
	}
	c.place(s.node, pr.p.newAlloc(pr.g, intent, s.node, id))
	if next, ok := pr.victimsOn(s.node, s.rank); ok {
		pr.sets[b] = next
	} else {
		pr.sets = slices.Delete(pr.sets, b, b+1)
	}
	return true
}

// victimsOn finds the cheapest set of allocations on node i whose eviction
// lets one replica of the group fit. Only allocations of other workloads
// with a strictly lower priority are candidates; hard filters (readiness,
// required labels, GPU model) must pass as they are, since no eviction
// changes them. The search is exact for one victim and greedy beyond
// (largest first and lowest priority first, each pruned of victims that
// turn out unnecessary), which is what makes it cheap enough to run on
// every node.
func (pr *preemptor) victimsOn(i, rank int) (victimSet, bool) {
	g, c := pr.g, pr.p.cell
	for _, f := range g.filters {
		if !capacityFilter(f) && f.check(g, c, i) != "" {
			return victimSet{}, false
		}
	}
	s := victimSet{node: i, rank: rank}
	if g.check(c, i) == "" {
		return s, true
	}
	n := c.nodes[i].node
	var cands []*api.Allocation
	for _, a := range c.st.AllocsByNode(n.ID) {
		if !a.Terminal() && !c.stopping[a.ID] && a.Priority < pr.p.w.Priority && a.Workload != pr.p.w.Name {
			cands = append(cands, a)
		}
	}
	if len(cands) == 0 || !pr.fitsWithout(i, cands) {
		return victimSet{}, false
	}
	lost := func(a *api.Allocation) float64 { return share(a.Resources, n.Capacity) }
	slices.SortFunc(cands, func(a, b *api.Allocation) int { return strings.Compare(a.ID, b.ID) })

	var best []*api.Allocation
	for _, a := range cands {
		one := []*api.Allocation{a}
		if pr.fitsWithout(i, one) && (best == nil || cheaperSet(one, best, lost)) {
			best = one
		}
	}
	if best == nil {
		bySize := slices.Clone(cands)
		slices.SortStableFunc(bySize, func(a, b *api.Allocation) int {
			if la, lb := lost(a), lost(b); la != lb {
				return cmpDesc(la, lb)
			}
			return a.Priority - b.Priority
		})
		byPrio := slices.Clone(cands)
		slices.SortStableFunc(byPrio, func(a, b *api.Allocation) int {
			if a.Priority != b.Priority {
				return a.Priority - b.Priority
			}
			return cmpDesc(lost(a), lost(b))
		})
		for _, order := range [][]*api.Allocation{bySize, byPrio} {
			if set := pr.greedy(i, order); best == nil || cheaperSet(set, best, lost) {
				best = set
			}
		}
	}
	s.victims = best
	for _, v := range best {
		s.maxPrio = max(s.maxPrio, v.Priority)
		s.lost += lost(v)
	}
	return s, true
}

// greedy takes victims in order until the replica fits, then drops, highest
// priority first, every victim the replica does not need after all.
func (pr *preemptor) greedy(i int, order []*api.Allocation) []*api.Allocation {
	var set []*api.Allocation
	for _, a := range order {
		set = append(set, a)
		if pr.fitsWithout(i, set) {
			break
		}
	}
	for k := len(set) - 1; k >= 0 && len(set) > 1; k-- {
		without := slices.Delete(slices.Clone(set), k, k+1)
		if pr.fitsWithout(i, without) {
			set = without
		}
	}
	return set
}

// fitsWithout reports whether one replica fits on node i once victims are
// gone: the full filter chain runs on the node's aggregate and, when the
// group pins cores or asks for GPUs, on a detail rebuilt without them. The
// cell is left as it was.
func (pr *preemptor) fitsWithout(i int, victims []*api.Allocation) bool {
	g, c := pr.g, pr.p.cell
	n := &c.nodes[i]
	free, detail := n.free, n.detail
	defer func() { n.free, n.detail = free, detail }()
	for _, v := range victims {
		n.free = n.free.Add(v.Resources)
	}
	if g.cores > 0 || g.gpus > 0 || g.gpuMilli > 0 {
		d := newNodeDetail(n.node)
		for _, a := range c.st.AllocsByNode(n.node.ID) {
			if !a.Terminal() && !c.stopping[a.ID] && !slices.Contains(victims, a) {
				d.apply(a)
			}
		}
		for _, a := range n.placed {
			d.apply(a)
		}
		n.detail = d
	}
	return g.check(c, i) == ""
}

// capacityFilter reports whether a filter's rejection could be lifted by
// evicting allocations.
func capacityFilter(f filter) bool {
	switch f.(type) {
	case resourceFilter, numaFilter, gpuFitFilter:
		return true
	}
	return false
}

// cheaperSet compares two victim sets on one node the way victimSet.cheaper
// does across nodes.
func cheaperSet(a, b []*api.Allocation, lost func(*api.Allocation) float64) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	ma, mb, la, lb := 0, 0, 0.0, 0.0
	for _, v := range a {
		ma, la = max(ma, v.Priority), la+lost(v)
	}
	for _, v := range b {
		mb, lb = max(mb, v.Priority), lb+lost(v)
	}
	if ma != mb {
		return ma < mb
	}
	return la < lb
}

// share is r as a fraction of capacity, summed over the dimensions the node
// has: a scale-free measure of how much work an eviction throws away.
func share(r, capacity api.Resources) float64 {
	frac := func(v, c int64) float64 {
		if c <= 0 {
			return 0
		}
		return float64(v) / float64(c)
	}
	return frac(r.CPUMilli, capacity.CPUMilli) + frac(r.MemoryBytes, capacity.MemoryBytes) +
		frac(r.DiskBytes, capacity.DiskBytes) + frac(r.GPUs, capacity.GPUs) +
		frac(r.GPUMilli, capacity.GPUs*1000) + frac(r.NetMbps, capacity.NetMbps)
}

func cmpDesc(a, b float64) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}
