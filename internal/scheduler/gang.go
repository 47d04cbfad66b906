package scheduler

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/topology"
)

// gangLevels returns the topology keys a gang tries, tightest first: the
// gang's key, then wider ones (topology.Wider); the whole cell always comes
// last and is not listed.
func gangLevels(key string) []string { return topology.Wider(key) }

// gangSize is how many members must run at once: MinMember, or every
// replica when it is unset.
func gangSize(tg *api.TaskGroup) int {
	if tg.Gang.MinMember > 0 {
		return tg.Gang.MinMember
	}
	return tg.Replicas
}

// placeGang places a gang group all-or-nothing. Members already running
// count towards the gang, so a gang of 8 with 6 running needs 2 more; if the
// plan cannot bring it to its size, it places none of it. Domains are
// tried tightest first: each value of the gang's topology key, then wider
// keys, then the whole cell; first without preemption anywhere, then with
// it, so that locality never costs someone else's work. Inside a domain the
// normal pipeline places the members; a domain that holds too few is
// rolled back. Members beyond the gang size (replicas > minMember) go
// wherever the cell has room once the gang itself is placed.
//
// A gang that does not fit keeps waiting: its evaluation is blocked and
// retried when capacity changes. The scheduler has no clock of its own, so
// Gang.Timeout only changes what the failure says (since when it waits and
// that the timeout passed, from Options.Now); giving up is the server's
// call.
func (p *placer) placeGang(g *group, gi groupIntents) (api.GroupFailure, bool) {
	size, intents := gangSize(g.tg), gi.place
	need := size - gi.kept
	if need <= 0 {
		return p.placeGroup(g, intents)
	}
	if need > intents.len() {
		f := p.cell.failure(g, intents.len())
		f.Summary = fmt.Sprintf("gang of %d cannot be completed: %d running, only %d more may be placed", size, gi.kept, intents.len())
		return f, false
	}

	levels := gangLevels(g.tg.Gang.Topology)
	holds := make([]int, len(levels)+1) // best count per level, the cell last; -1: no domain
	for l := range levels {
		holds[l] = -1
	}
	// Only nodes that pass the group's static filters and have room for a
	// member (gangview.go) can take one: every trial walks those alone, and a
	// domain whose room (an upper bound on what a trial could place) is
	// below the gang's size is not tried at all. Both leave the plan as it would
	// be without them: a rolled-back trial leaves no trace, and a trial
	// is still run where its count could raise the best count of its
	// level, which the failure reports.
	gs := p.gangs()
	hv := gs.view(g)
	var f api.GroupFailure
	for _, preempt := range []bool{false, true} {
		room := p.room(g, hv, preempt, need)
		cell := gs.withRoom(hv.order)
		cellDone := false
		if preempt {
			// The whole cell first, evicting: when even it cannot hold the
			// gang, no domain of it will, and this trial is the cell's own.
			k, t := p.attempt(g, intents, cell, true)
			switch {
			case k >= need && len(levels) == 0:
				if k, ok := p.keep(t, k, g, intents, need, cell, p.cell.order, true); ok {
					return p.placeRest(g, intents.from(k))
				}
				cellDone = true
				continue
			case k < need:
				// The reasons are taken with the cell as full as the gang
				// could make it: on the empty cell every node might accept
				// one member.
				f = p.cell.failure(g, intents.len())
				holds[len(levels)] = max(holds[len(levels)], k)
				cellDone = true
			}
			t.rollback()
		}
		for l, key := range levels {
			if cellDone {
				break
			}
			if len(gs.domains(key)) > 0 {
				holds[l] = max(holds[l], 0)
			}
			for _, d := range hv.domains(gs, key) {
				if b := gs.roomOf(d.nodes, need); b < need && b <= holds[l] {
					continue // cannot hold the gang nor beat the level's best
				}
				k, ok := p.tryDomain(g, intents, need, gs.withRoom(d.nodes), d.full, preempt)
				if ok {
					return p.placeRest(g, intents.from(k))
				}
				holds[l] = max(holds[l], k)
			}
		}
		if cellDone || (!preempt && room < need) {
			// Without eviction a cell that has no room for the gang is
			// not tried: the evicting pass places at least as many.
			continue
		}
		// In the evicting pass this repeats the first trial, which held
		// the gang.
		k, ok := p.tryDomain(g, intents, need, cell, p.cell.order, preempt)
		if ok {
			return p.placeRest(g, intents.from(k))
		}
		holds[len(levels)] = max(holds[len(levels)], k)
	}
	f.Summary = p.gangSummary(g, size, need, levels, holds, f.Summary)
	return f, false
}

// attempt places as many of intents as fit on the nodes of order, as a
// trial the caller commits or rolls back.
func (p *placer) attempt(g *group, intents intentList, order []int32, preempt bool) (int, *trial) {
	t := p.begin(g)
	return p.placeIn(g, intents, order, preempt), t
}

// tryDomain places as many of intents as fit on the nodes of order, a
// domain (full, in seeded order) cut down to its nodes with room, and
// keeps them if they are at least need; otherwise it rolls the trial back.
func (p *placer) tryDomain(g *group, intents intentList, need int, order, full []int32, preempt bool) (int, bool) {
	k, t := p.attempt(g, intents, order, preempt)
	if k < need {
		t.rollback()
		return k, false
	}
	return p.keep(t, k, g, intents, need, order, full, preempt)
}

// keep commits a trial on order that placed k >= need members. When order
// is a cut of full, the trial is first replayed on full: it places the
// very same members (the nodes left out never fit, gangview.go), and the
// group's statistics then count every node the walk examined, as the
// explanation of the plan should.
func (p *placer) keep(t *trial, k int, g *group, intents intentList, need int, order, full []int32, preempt bool) (int, bool) {
	if len(order) == len(full) {
		t.commit()
		return k, true
	}
	t.rollback()
	k, t = p.attempt(g, intents, full, preempt)
	if k < need { // cannot happen; never keep a partial gang
		t.rollback()
		return k, false
	}
	t.commit()
	return k, true
}

// placeRest places the members beyond the gang's size anywhere.
func (p *placer) placeRest(g *group, rest intentList) (api.GroupFailure, bool) {
	if rest.len() == 0 {
		return api.GroupFailure{}, true
	}
	return p.placeGroup(g, rest)
}

// gangSummary words a gang's failure: how big it is, how many members the
// best domain of each level that has domains (and the whole cell) could
// hold, evicting lower-priority work where it may, why nodes
// refuse, and since when it waits.
func (p *placer) gangSummary(g *group, size, need int, levels []string, holds []int, reasons string) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "gang of %d does not fit", size)
	if need < size {
		fmt.Fprintf(&sb, " (%d more needed)", need)
	}
	sb.WriteString(": ")
	for l, key := range levels {
		if holds[l] >= 0 {
			fmt.Fprintf(&sb, "best %s holds %d, ", key, holds[l])
		}
	}
	sb.WriteString("the whole cell holds " + strconv.Itoa(holds[len(levels)]))
	if reasons != "" {
		sb.WriteString("; " + reasons)
	}
	if since := p.w.SubmitTime; !since.IsZero() {
		sb.WriteString("; waiting since " + since.UTC().Format(time.RFC3339))
		if to := g.tg.Gang.Timeout; to > 0 && !p.now.IsZero() && p.now.Sub(since) > to {
			fmt.Fprintf(&sb, ", past its %s timeout", to)
		}
	}
	return sb.String()
}
