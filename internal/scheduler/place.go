package scheduler

import (
	"time"

	"github.com/strata-dev/strata/api"
)

// placer places the groups of one workload on one cell.
type placer struct {
	cell   *cell
	w      *api.Workload
	ids    idGen
	now    time.Time
	sample int
	// search is the gang search's state, shared by the plan's gangs
	// (gangview.go); nil until the first gang.
	search *gangSearch
}

// placeGroup places one allocation per intent, in order, anywhere in the
// cell. When the cell has no room left it returns the group's failure, with
// the reasons of every node, and false.
func (p *placer) placeGroup(g *group, intents intentList) (api.GroupFailure, bool) {
	before := len(p.cell.changes)
	k, set := p.placeWindow(g, intents, p.cell.order, true)
	switch {
	case k == intents.len():
		return api.GroupFailure{}, true
	case len(p.cell.changes) == before && set.rejectedAll():
		// Nothing changed the cell since the window judged every node, and
		// it judged them all unfit: the failure is what it counted.
		return p.cell.failureOf(g, intents.len()-k, set.stats.reasons()), false
	}
	return p.cell.failure(g, intents.len()-k), false
}

// placeIn places intents in order on the nodes of order (the cell's seeded
// order, or the part of it a gang domain holds) and returns how many it
// placed: a prefix of intents.
//
// This is the preemption seam. When the feasible set runs dry and preempt
// is set, the remaining replicas may evict strictly lower-priority
// allocations of other workloads, one node at a time, choosing the
// cheapest victims (preempt.go). Evicting only when nothing fits as is
// keeps preemption a last resort.
func (p *placer) placeIn(g *group, intents intentList, order []int32, preempt bool) int {
	k, _ := p.placeWindow(g, intents, order, preempt)
	return k
}

// placeWindow is placeIn that also returns the window it placed from.
func (p *placer) placeWindow(g *group, intents intentList, order []int32, preempt bool) (int, *feasibleSet) {
	set := openWindow(g, p.cell, p.sample, order)
	opened := len(p.cell.changes)
	defer func() { g.stats.merge(&set.stats) }()
	var pre *preemptor
	for k, intent := range intents.all() {
		if overQuota(g, p.cell) {
			return k, set // candidates were judged before the quota filled up
		}
		set.fill()
		j, ok := set.best()
		if ok {
			i := set.node(j)
			p.noteChoice(g, &set.stats, i)
			p.cell.place(i, p.newAlloc(g, intent, i, p.ids.next()))
			set.update(j)
			if pre != nil && pre.ready {
				pre.refresh([]int{i}) // its victim set for i assumed the room i had
			}
			continue
		}
		if !preempt {
			return k, set
		}
		if pre == nil {
			if len(p.cell.changes) == opened && set.rejectedAll() && p.cell.nothingBelow(p.w.Priority) {
				// No node fits as it is and nothing in the cell may be
				// evicted: every node's victim search would come back empty.
				return k, set
			}
			pre = newPreemptor(p, g, order)
		}
		if !pre.place(intent, &set.stats) {
			return k, set
		}
	}
	return intents.len(), set
}

// noteChoice records the score components of the group's first chosen
// node, before the replica lands there.
func (p *placer) noteChoice(g *group, stats *groupStats, i int) {
	if stats.chosen == nil && g.stats.chosen == nil {
		stats.chosen = g.nodeScore(p.cell, i)
	}
}

func (p *placer) newAlloc(g *group, intent placeIntent, i int, id string) *api.Allocation {
	n := p.cell.node(i)
	return &api.Allocation{
		ID:              id,
		Namespace:       api.NamespaceOf(p.w.Namespace),
		Workload:        p.w.Name,
		Group:           g.tg.Name,
		Index:           intent.index,
		NodeID:          n.ID,
		NodeName:        n.Name,
		WorkloadVersion: p.w.Version,
		Priority:        p.w.Priority,
		TaskGroup:       g.tg,
		Resources:       g.req.Resources,
		Assignment:      p.cell.assign(g, i),
		DesiredStatus:   api.DesiredRun,
		ClientStatus:    api.AllocPending,
		PreviousAlloc:   intent.previous,
		CreateTime:      p.now,
	}
}
