package scheduler

import (
	"math/rand/v2"

	"github.com/strata-dev/strata/api"
)

// change is one journaled mutation of the cell: a placement, or (evicted)
// the preemption of a live allocation.
type change struct {
	node    int
	alloc   *api.Allocation
	evicted bool
}

// trial is a tentative set of placements and evictions that can be undone.
// Gangs are placed all-or-nothing: a domain is tried by placing members
// for real (so every filter, score and hardware assignment is the normal
// pipeline's) and, when too few fit, the trial is rolled back and the cell
// is as it was before, stops included.
//
// The allocation ids a trial drew and what it added to the group's
// statistics are given back too, so that a plan does not depend on which
// trials were run before it: the engine may skip trials it can prove
// hopeless (gangview.go) without changing a single id or count.
type trial struct {
	c       *cell
	changes []change
	ids     *rand.PCG // the placer's id stream, restored on rollback
	idState rand.PCG
	g       *group // whose stats are restored on rollback
	stats   groupStats
}

func (c *cell) begin() *trial {
	t := &trial{c: c}
	c.journal = &t.changes
	return t
}

// begin starts a trial of group g on the placer's cell that also restores
// its id stream and g's statistics on rollback.
func (p *placer) begin(g *group) *trial {
	t := p.cell.begin()
	t.ids, t.idState = p.ids.pcg, *p.ids.pcg
	t.g, t.stats = g, g.stats.clone()
	return t
}

// commit keeps the trial's changes.
func (t *trial) commit() { t.c.journal = nil }

// rollback undoes the trial's changes, newest first. Node details touched
// are dropped and reloaded on next use rather than un-applied.
func (t *trial) rollback() {
	c := t.c
	c.journal = nil
	if t.ids != nil {
		*t.ids = t.idState
	}
	if t.g != nil {
		t.g.stats = t.stats
	}
	for k := len(t.changes) - 1; k >= 0; k-- {
		ch := t.changes[k]
		n := c.touch(ch.node)
		if ch.evicted {
			n.free = n.free.Sub(ch.alloc.Resources)
			delete(c.stopping, ch.alloc.ID)
			stops := c.stops[n.node.ID]
			if len(stops) == 1 {
				delete(c.stops, n.node.ID)
			} else {
				c.stops[n.node.ID] = stops[:len(stops)-1]
			}
		} else {
			n.free = n.free.Add(ch.alloc.Resources)
			n.placed = n.placed[:len(n.placed)-1]
			c.rel.unplaced(ch.node, ch.alloc)
		}
		n.detail = nil
	}
	t.changes = nil
}
