package scheduler

import (
	"cmp"
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
	units map[string][]*api.Allocation // live members of victim gangs, by workload/group
	// scratch holds a node's detail without a victim set (fitsWithout).
	scratch nodeDetail
}

func newPreemptor(p *placer, g *group, order []int32) *preemptor {
	return &preemptor{p: p, g: g, order: order}
}

// place puts one replica on the node with the cheapest victim set, evicting
// the victims in the same plan, and reports whether there was one.
func (pr *preemptor) place(intent placeIntent, stats *groupStats) bool {
	if !pr.ready {
		for rank, i := range pr.order {
			if s, ok := pr.victimsOn(int(i), rank); ok {
				pr.sets = append(pr.sets, s)
			}
		}
		pr.ready = true
	}
	b := -1
	for b < 0 {
		if b = pr.cheapest(); b < 0 {
			return false
		}
		if pr.p.cell.budgets.over(pr.sets[b].victims) != nil {
			// An earlier preemption of the plan spent a victim group's
			// budget since this set was found: look again on its node.
			pr.refresh([]int{pr.sets[b].node})
			b = -1
		}
	}
	s := pr.sets[b]
	pr.p.noteChoice(pr.g, stats, s.node)
	c, w := pr.p.cell, pr.p.w
	id := pr.p.ids.next()
	touched := []int{s.node}
	if len(s.victims) > 0 {
		reason := fmt.Sprintf("preempted by %s/%s[%d] (priority %d)", w.Name, pr.g.tg.Name, intent.index, w.Priority)
		byNode := map[int][]*api.Allocation{}
		for _, v := range s.victims {
			if i := c.find(v.NodeID); i >= 0 {
				if _, seen := byNode[i]; !seen && i != s.node {
					touched = append(touched, i)
				}
				byNode[i] = append(byNode[i], v)
			}
		}
		for _, i := range touched {
			if vs := byNode[i]; len(vs) > 0 {
				c.evict(i, vs, reason, id)
			}
		}
	}
	c.place(s.node, pr.p.newAlloc(pr.g, intent, s.node, id))
	pr.refresh(touched)
	return true
}

// cheapest returns the index in sets of the cheapest set whose node the
// group's dynamic terms accept, or -1.
func (pr *preemptor) cheapest() int {
	b := -1
	for j := range pr.sets {
		if len(pr.g.dynamic) > 0 {
			// Spread and rules about the group's own replicas move with
			// every placement; evicting others never changes them.
			if r, _ := pr.g.verdict(pr.p.cell, pr.sets[j].node); r != "" {
				continue
			}
		}
		if b < 0 || pr.sets[j].cheaper(&pr.sets[b]) {
			b = j
		}
	}
	return b
}

// refresh recomputes the victim sets of the nodes a preemption changed: the
// preemptor's node and those of victim gang members elsewhere.
func (pr *preemptor) refresh(nodes []int) {
	for _, i := range nodes {
		j := slices.IndexFunc(pr.sets, func(s victimSet) bool { return s.node == i })
		rank := slices.Index(pr.order, int32(i))
		next, ok := pr.victimsOn(i, rank)
		switch {
		case rank < 0: // outside this domain
			if j >= 0 {
				pr.sets = slices.Delete(pr.sets, j, j+1)
			}
		case ok && j >= 0:
			pr.sets[j] = next
		case ok:
			pr.sets = append(pr.sets, next)
		case j >= 0:
			pr.sets = slices.Delete(pr.sets, j, j+1)
		}
	}
}

// unit is what evicting a must evict with it: a alone, or, when a is a
// member of a gang, every live member of that gang, wherever it runs, since
// a gang missing a member is no use. ok is false when some member may not
// be preempted.
func (pr *preemptor) unit(a *api.Allocation) (members []*api.Allocation, ok bool) {
	if a.TaskGroup == nil || a.TaskGroup.Gang == nil {
		return []*api.Allocation{a}, true
	}
	key := api.NamespaceOf(a.Namespace) + "/" + a.Workload + "/" + a.Group
	all, cached := pr.units[key]
	if !cached {
		for _, m := range pr.p.cell.st.AllocsByWorkload(a.Namespace, a.Workload) {
			if m.Group == a.Group && live(m) {
				all = append(all, m)
			}
		}
		if pr.units == nil {
			pr.units = make(map[string][]*api.Allocation)
		}
		pr.units[key] = all
	}
	for _, m := range all {
		if pr.p.cell.stopping[m.ID] {
			continue
		}
		if m.Priority >= pr.p.w.Priority {
			return nil, false
		}
		members = append(members, m)
	}
	return members, true
}

// expand replaces each victim by its unit, without duplicates, sorted by
// id when a gang was expanded.
func (pr *preemptor) expand(victims []*api.Allocation) []*api.Allocation {
	if !slices.ContainsFunc(victims, func(v *api.Allocation) bool { return v.TaskGroup != nil && v.TaskGroup.Gang != nil }) {
		return victims // no gang among them: nothing to add
	}
	out := make([]*api.Allocation, 0, len(victims))
	for _, v := range victims {
		members, _ := pr.unit(v)
		for _, m := range members {
			if !slices.Contains(out, m) {
				out = append(out, m)
			}
		}
	}
	slices.SortFunc(out, func(a, b *api.Allocation) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// victimsOn finds the cheapest set of allocations on node i whose eviction
// lets one replica of the group fit. Only allocations of other workloads
// with a strictly lower priority are candidates; hard filters (readiness,
// required labels, GPU model) must pass as they are, since no eviction
// changes them. The search is exact for one victim and greedy beyond
// (largest first and lowest priority first, each pruned of victims that
// turn out unnecessary), which is what makes it cheap enough to run on
// every node. A victim that is a gang member takes its whole gang with it
// (unit), and sets are compared by what they evict in all.
func (pr *preemptor) victimsOn(i, rank int) (victimSet, bool) {
	g, c := pr.g, pr.p.cell
	s := victimSet{node: i, rank: rank}
	if v := g.judged(c, i); v != nil {
		// The cached verdict answers for the node-local filters; the
		// dynamic ones are judged now.
		switch {
		case v.staticFail || g.dynamicReject(c, i):
			return victimSet{}, false
		case v.first < 0:
			return s, true
		}
		if lowest, ok := c.lowestPriority(i); ok && lowest >= pr.p.w.Priority {
			c.budgets.block(g, i, nil)
			return victimSet{}, false // nothing here may be evicted
		}
	} else {
		n := c.at(i)
		for _, f := range g.filters {
			if f.kind() != kindCapacity && f.check(g, c, n, i) != "" {
				return victimSet{}, false
			}
		}
		if g.check(c, i) == "" {
			return s, true
		}
	}
	n := c.at(i)
	// blocked is the first budget that refused a victim here: named in
	// the group's failure when no set makes room.
	var blocked *victimBudget
	defer func() { c.budgets.block(g, i, blocked) }()
	var cands, refused []*api.Allocation
	for _, a := range c.st.AllocsByNode(n.node.ID) {
		if pr.p.evictable(a) && !g.keeps(a) {
			if members, ok := pr.unit(a); ok {
				if vb := c.budgets.over(members); vb != nil {
					blocked = cmp.Or(blocked, vb)
					refused = append(refused, a)
					continue
				}
				cands = append(cands, a)
			}
		}
	}
	if len(cands) == 0 || !pr.fitsWithout(i, cands) {
		if blocked != nil && !pr.fitsWithout(i, append(cands, refused...)) {
			blocked = nil // no room even with them: not the budget's doing
		}
		return victimSet{}, false
	}
	lost := func(a *api.Allocation) float64 {
		if j := c.find(a.NodeID); j >= 0 {
			return share(a.Resources, c.node(j).Capacity)
		}
		return 0
	}
	cheaperSet := func(a, b []*api.Allocation) bool { return cheaperSet(pr.expand(a), pr.expand(b), lost) }
	slices.SortFunc(cands, func(a, b *api.Allocation) int { return strings.Compare(a.ID, b.ID) })

	var best []*api.Allocation
	for _, a := range cands {
		one := []*api.Allocation{a}
		if pr.fitsWithout(i, one) && (best == nil || cheaperSet(one, best)) {
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
			set, vb := pr.greedy(i, order)
			blocked = cmp.Or(blocked, vb)
			if set != nil && (best == nil || cheaperSet(set, best)) {
				best = set
			}
		}
		if best == nil {
			return victimSet{}, false // no set within the victims' budgets
		}
	}
	blocked = nil // a set makes room
	s.victims = pr.expand(best)
	for _, v := range s.victims {
		s.maxPrio = max(s.maxPrio, v.Priority)
		s.lost += lost(v)
	}
	return s, true
}

// greedy takes victims in order until the replica fits, then drops, highest
// priority first, every victim the replica does not need after all. A
// victim whose eviction, with those taken so far, would take a group
// beyond its disruption budget is passed over; when the replica never
// fits, greedy returns nil and the first budget that refused a victim.
func (pr *preemptor) greedy(i int, order []*api.Allocation) ([]*api.Allocation, *victimBudget) {
	var set []*api.Allocation
	var blocked *victimBudget
	fits := false
	for _, a := range order {
		set = append(set, a)
		if vb := pr.p.cell.budgets.over(pr.expand(set)); vb != nil {
			blocked = cmp.Or(blocked, vb)
			set = set[:len(set)-1]
			continue
		}
		if pr.fitsWithout(i, set) {
			fits = true
			break
		}
	}
	if !fits {
		return nil, blocked
	}
	for k := len(set) - 1; k >= 0 && len(set) > 1; k-- {
		without := slices.Delete(slices.Clone(set), k, k+1)
		if pr.fitsWithout(i, without) {
			set = without
		}
	}
	return set, nil
}

// fitsWithout reports whether one replica fits on node i once victims are
// gone: the full filter chain runs on a copy of the node's state with the
// victims' resources freed and, when the group pins cores or asks for
// GPUs, their cores and GPUs released. The node's own state is not
// touched.
//
// The aggregate is tested first, since most victim sets that fail, fail
// there and the detail costs far more. The copy's detail is the node's
// own with the victims released (into scratch reused across calls),
// unless the node's allocations conflict, where releasing one would free
// what another still holds; then it is rebuilt without them.
func (pr *preemptor) fitsWithout(i int, victims []*api.Allocation) bool {
	g, c := pr.g, pr.p.cell
	n := c.at(i)
	probe := *n
	for _, v := range victims {
		if v.NodeID == n.node.ID {
			probe.free = probe.free.Add(v.Resources)
		}
	}
	if fitCount(&g.req.Resources, &probe.free, 1) == 0 {
		return false
	}
	if g.needsDetail() {
		if base := c.detail(i); !base.conflicted {
			base.cloneInto(&pr.scratch)
			for _, v := range victims {
				if v.NodeID == n.node.ID {
					pr.scratch.release(v)
				}
			}
			probe.detail = &pr.scratch
		} else {
			d := newNodeDetail(n.node)
			for _, a := range c.st.AllocsByNode(n.node.ID) {
				if !a.Terminal() && !c.stopping[a.ID] && !slices.Contains(victims, a) {
					d.apply(a)
				}
			}
			for _, a := range n.placed {
				d.apply(a)
			}
			probe.detail = d
		}
	}
	k, _ := g.firstRejectOn(c, &probe, i)
	return k < 0
}

// evictable reports whether the plan's workload may evict a: live, of
// another workload, strictly lower priority, not stopped by the plan
// already. The victim search and the gang room tables (gangview.go) both
// ask it; a group may further keep what it has affinity to (group.keeps).
func (p *placer) evictable(a *api.Allocation) bool {
	// Cheapest tests first: most allocations fail on priority alone.
	return a.Priority < p.w.Priority && !a.Terminal() && !sameWorkload(a, p.w) && !p.cell.stopping[a.ID]
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
	total := 0.0
	for k := range shareOf {
		c := *capacity.Of(k)
		if s := &shareOf[k]; s.parts > 0 { // a share of one device: of its parts
			c = *capacity.Of(s.of) * s.parts
		}
		if c > 0 {
			total += float64(*r.Of(k)) / float64(c)
		}
	}
	return total
}

// shareOf is, for each per-device dimension, the dimension it divides and
// into how many parts (parts 0: an aggregate dimension).
var shareOf = func() []struct {
	of    int
	parts int64
} {
	out := make([]struct {
		of    int
		parts int64
	}, len(api.Dimensions))
	for k, d := range api.Dimensions {
		if d.Fit == api.FitPerDevice {
			out[k].of, out[k].parts = api.DimensionIndex(d.Share.Of), d.Share.Parts
		}
	}
	return out
}()

func cmpDesc(a, b float64) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}

// sameWorkload reports whether a belongs to w.
func sameWorkload(a *api.Allocation, w *api.Workload) bool {
	return a.Workload == w.Name && api.NamespaceOf(a.Namespace) == api.NamespaceOf(w.Namespace)
}
