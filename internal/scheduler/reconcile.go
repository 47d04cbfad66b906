package scheduler

import (
	"time"

	"github.com/strata-dev/strata/api"
)

// MaxReschedules is how many replacements a replica gets for failed
// allocations. Following PreviousAlloc from a failed allocation, the engine
// counts the failed allocations of the chain; it places a replacement only
// while that count is at most MaxReschedules. The original and three failed
// replacements (four failures) end the chain. Lost allocations (their node
// went down) are always replaced and do not count: that was not the task's
// fault. Only failures of the workload's current version count, so a new
// version of a workload starts with a fresh budget.
const MaxReschedules = 3

// Stop reasons written into StopRequest.Reason.
const (
	reasonWorkloadStopped = "workload stopped"
	reasonGroupRemoved    = "group removed"
	reasonScaledDown      = "scaled down"
	reasonNodeDown        = "node down"
	reasonUpdated         = "workload updated"
	reasonDuplicate       = "duplicate replica"
	reasonMoved           = "moved: its replacement runs"
	reasonDrainDeadline   = "node drain deadline"
	reasonPurged          = "workload purged"
)

type stopIntent struct {
	alloc  *api.Allocation
	reason string
	lost   bool
}

type placeIntent struct {
	index    int
	previous string // PreviousAlloc of the new allocation
}

type groupIntents struct {
	group *api.TaskGroup
	place []placeIntent // ascending index
	kept  int           // live allocations that stay: a gang's running members
}

// reconciliation is what the workload needs: stops first, then placements
// per group in the workload's group order.
type reconciliation struct {
	stops  []stopIntent
	groups []groupIntents
}

func (r *reconciliation) stop(a *api.Allocation, reason string, lost bool) {
	r.stops = append(r.stops, stopIntent{alloc: a, reason: reason, lost: lost})
}

// live reports whether an allocation counts towards its group's replicas.
func live(a *api.Allocation) bool { return a.DesiredStatus == api.DesiredRun && !a.Terminal() }

// slot is what reconcile learned about one replica index.
type slot struct {
	keep     *api.Allocation // the live allocation that stays
	replaced string          // a live allocation stopped for a replacement
	dead     *api.Allocation // the newest not-yet-replaced non-live allocation
	// leaving is a live allocation being moved (moves.go): keep is its
	// replacement, and it stops once keep runs.
	leaving *api.Allocation
}

// reconcile compares the workload's desired replicas with its allocations
// (sorted by ID, so every choice below is deterministic). nodes finds the
// node an allocation runs on (nil: gone); now is the plan's time, which
// drain deadlines are compared with.
func reconcile(w *api.Workload, allocs []*api.Allocation, nodes func(string) *api.Node, now time.Time) reconciliation {
	var rec reconciliation
	nodeUp := func(id string) bool {
		n := nodes(id)
		return n != nil && n.Status != api.NodeDown
	}
	if w != nil {
		allocs = dropEarlierIncarnation(&rec, w, allocs)
	}
	if w == nil || w.Stopped {
		for _, a := range allocs {
			if live(a) {
				rec.stop(a, reasonWorkloadStopped, false)
			}
		}
		return rec
	}

	groupIndex := make(map[string]int, len(w.Groups))
	slots := make([][]slot, len(w.Groups))
	for i, g := range w.Groups {
		groupIndex[g.Name] = i
		slots[i] = make([]slot, max(g.Replicas, 0))
	}
	byID := make(map[string]*api.Allocation, len(allocs))
	replacedBy := make(map[string]bool)
	for _, a := range allocs {
		byID[a.ID] = a
		if a.PreviousAlloc != "" {
			replacedBy[a.PreviousAlloc] = true
		}
	}
	specs := newSpecCache()

	for _, a := range allocs {
		gi, known := groupIndex[a.Group]
		inRange := known && a.Index >= 0 && a.Index < len(slots[gi])
		if !live(a) {
			if inRange && !replacedBy[a.ID] {
				s := &slots[gi][a.Index]
				if s.dead == nil || a.CreateIndex > s.dead.CreateIndex {
					s.dead = a
				}
			}
			continue
		}
		if !known {
			rec.stop(a, reasonGroupRemoved, false)
			continue
		}
		if !inRange {
			rec.stop(a, reasonScaledDown, false)
			continue
		}
		g, s := w.Groups[gi], &slots[gi][a.Index]
		switch {
		case !nodeUp(a.NodeID):
			rec.stop(a, reasonNodeDown, true)
			if s.replaced == "" {
				s.replaced = a.ID
			}
		case a.WorkloadVersion != w.Version && specs.changed(a.TaskGroup, g):
			rec.stop(a, reasonUpdated, false)
			if s.replaced == "" {
				s.replaced = a.ID
			}
		case s.keep != nil && s.leaving == nil && s.keep.PreviousAlloc == a.ID:
			s.leaving = a // a is being moved; s.keep replaces it
		case s.keep != nil && s.leaving == nil && a.PreviousAlloc == s.keep.ID:
			s.leaving, s.keep = s.keep, a
		case s.keep != nil:
			rec.stop(a, reasonDuplicate, false)
		default:
			s.keep = a
		}
	}

	mv := newMover(w, allocs, nodes, now)
	for gi, g := range w.Groups {
		moving := mv.plan(&rec, g, slots[gi])
		var place []placeIntent
		kept := 0
		for idx, s := range slots[gi] {
			if s.keep != nil {
				kept++
			}
			if prev, ok := moving[idx]; ok {
				place = append(place, placeIntent{index: idx, previous: prev})
				continue
			}
			if intent, ok := s.intent(idx, w.Version, byID); ok {
				place = append(place, intent)
			}
		}
		if len(place) > 0 {
			rec.groups = append(rec.groups, groupIntents{group: g, place: place, kept: kept})
		}
	}
	return rec
}

// intent decides whether index idx needs a new allocation, and which
// allocation it replaces.
func (s slot) intent(idx int, version uint64, byID map[string]*api.Allocation) (placeIntent, bool) {
	switch {
	case s.keep != nil:
		return placeIntent{}, false
	case s.replaced != "":
		return placeIntent{index: idx, previous: s.replaced}, true
	case s.dead == nil:
		return placeIntent{index: idx}, true
	}
	d := s.dead
	switch {
	case d.ClientStatus == api.AllocFailed:
		if failuresInChain(d, version, byID) > MaxReschedules {
			return placeIntent{}, false
		}
		return placeIntent{index: idx, previous: d.ID}, true
	case d.ClientStatus == api.AllocLost:
		return placeIntent{index: idx, previous: d.ID}, true
	case d.ClientStatus == api.AllocComplete && d.DesiredStatus == api.DesiredRun:
		return placeIntent{}, false // finished its work
	}
	return placeIntent{index: idx}, true
}

// failuresInChain counts the failed allocations of workload version version
// from a back along PreviousAlloc.
// Allocations already garbage-collected end the chain; the hop bound guards
// against a corrupt cycle.
func failuresInChain(a *api.Allocation, version uint64, byID map[string]*api.Allocation) int {
	n := 0
	for hops := 0; a != nil && hops <= len(byID); hops++ {
		if a.ClientStatus == api.AllocFailed && a.WorkloadVersion == version {
			n++
		}
		a = byID[a.PreviousAlloc]
	}
	return n
}
