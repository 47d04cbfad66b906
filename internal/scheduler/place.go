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
}

// placeGroup places one allocation per intent, in order. When the cell has
// no room left it returns the group's failure, with the reasons of every
// node, and false.
//
// Preemption seam: this is where a later preemption pass plugs in. When the
// feasible set runs dry, the nodes rejected only by capacity filters
// (resources, NUMA, GPU fit) are those where evicting allocations of lower
// priority than p.w.Priority could make room; the pass would add those
// evictions to the plan's stops, credit the node in the cell and retry.
func (p *placer) placeGroup(g *group, intents []placeIntent) (api.GroupFailure, bool) {
	set := newFeasibleSet(g, p.cell, p.sample)
	for k, intent := range intents {
		set.fill()
		j, ok := set.best()
		if !ok {
			return p.cell.explain(g, len(intents)-k), false
		}
		i := int(set.nodes[j].node)
		p.cell.place(i, p.newAlloc(g, intent, i))
		set.update(j)
	}
	return api.GroupFailure{}, true
}

func (p *placer) newAlloc(g *group, intent placeIntent, i int) *api.Allocation {
	n := p.cell.nodes[i].node
	return &api.Allocation{
		ID:              p.ids.next(),
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
