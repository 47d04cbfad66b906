package scheduler

import (
	"strings"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/lease"
	"github.com/strata-dev/strata/internal/reschedule"
)

// MaxReschedules is the default number of replacements a replica gets for
// failed allocations within the reschedule interval
// (api.DefaultRescheduleAttempts). The group's ReschedulePolicy decides:
// how many, within which interval, after which delay (reschedule.Decide).
// Following PreviousAlloc from a failed allocation, the engine collects the
// failed allocations of the chain. Lost allocations (their node went down)
// and fenced ones (the agent stopped them when its lease lapsed) are
// replaced at once and do not count: that was not the task's fault. Only
// failures of the workload's current version count, so a new version of a
// workload starts with a fresh budget.
const MaxReschedules = api.DefaultRescheduleAttempts

// Stop reasons written into StopRequest.Reason.
const (
	reasonWorkloadStopped = "workload stopped"
	reasonGroupRemoved    = "group removed"
	reasonScaledDown      = "scaled down"
	reasonNodeDown        = "node down"
	reasonUpdated         = "workload updated"
	// reasonUpdatedStopFirst stops an at-most-once copy for an update:
	// its replacement is placed once it has stopped.
	reasonUpdatedStopFirst = "workload updated (at most once: stopped before its replacement starts)"
	reasonDuplicate        = "duplicate replica"
	reasonMoved            = "moved: its replacement runs"
	reasonMovedAway        = "moved off a draining node"
	reasonDrainDeadline    = "node drain deadline"
	reasonPurged           = "workload purged"
)

type stopIntent struct {
	alloc  *api.Allocation
	reason string
	lost   bool
}

type groupIntents struct {
	group *api.TaskGroup
	place intentList // ascending index (intents.go)
	kept  int        // live allocations that stay: a gang's running members
}

// reconciliation is what the workload needs: stops first, then placements
// per group in the workload's group order, and when to look again.
type reconciliation struct {
	stops  []stopIntent
	groups []groupIntents
	// deployment is the progress of the workload's active deployment
	// (rolling.go); nil when it has none.
	deployment *api.DeploymentProgress
	// inPlace are live allocations of an older version whose spec did not
	// change: moved to the current version without a restart.
	inPlace []*api.Allocation
	// followUp, when set, is the earliest time something decided here
	// changes by the clock alone: a delayed replacement falls due, an
	// unknown allocation's grace ends.
	followUp time.Time
}

func (r *reconciliation) stop(a *api.Allocation, reason string, lost bool) {
	r.stops = append(r.stops, stopIntent{alloc: a, reason: reason, lost: lost})
}

func (r *reconciliation) lookAgainAt(t time.Time) {
	if r.followUp.IsZero() || t.Before(r.followUp) {
		r.followUp = t
	}
}

// live reports whether an allocation counts towards its group's replicas.
func live(a *api.Allocation) bool { return a.DesiredStatus == api.DesiredRun && !a.Terminal() }

// fenced reports whether an agent stopped the allocation itself because
// its lease lapsed (api.ReasonFenced): not the task's failure.
func fenced(a *api.Allocation) bool {
	return a.ClientStatus == api.AllocFailed && strings.Contains(a.ClientReason, api.ReasonFenced)
}

// clusterView is what reconcile reads besides the workload's allocations:
// nodes (is one down, since when, on which lease) and the time.
type clusterView struct {
	node func(id string) *api.Node
	now  time.Time
}

func (v clusterView) nodeUp(id string) bool {
	n := v.node(id)
	return n != nil && n.Status != api.NodeDown
}

// draining reports whether node id is being drained (or quarantined).
func (v clusterView) draining(id string) bool {
	n := v.node(id)
	return n != nil && n.Drain != nil
}

// slot is what reconcile learned about one replica index.
type slot struct {
	unknown  *api.Allocation // a live allocation of a silent node, still in its grace
	holds    bool            // unknown holds the index: no replacement meanwhile
	replaced string          // a live allocation stopped for a replacement
	dead     *api.Allocation // the newest not-yet-replaced non-live allocation
	keep     *api.Allocation // the live allocation that stays
	outdated *api.Allocation // a live allocation of an older spec, kept until its replacement is healthy
	// leaving is a live allocation being moved off a draining node
	// (moves.go): keep is its replacement, and it stops once keep runs.
	leaving *api.Allocation
}

// reconcile compares the workload's desired replicas with its allocations
// (sorted by ID, so every choice below is deterministic). An allocation of
// an older spec stays until the rolling update (rolling.go, under the
// workload's deployment d, nil when none) has a healthy replacement beside
// it.
func reconcile(w *api.Workload, allocs []*api.Allocation, view clusterView, d *api.Deployment) reconciliation {
	var rec reconciliation
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
	slots := make([]*slotTable, len(w.Groups))
	for i, g := range w.Groups {
		groupIndex[g.Name] = i
		slots[i] = newSlotTable(g.Replicas)
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
		inRange := known && a.Index >= 0 && a.Index < slots[gi].replicas
		if !live(a) {
			if inRange && !replacedBy[a.ID] {
				s := slots[gi].get(a.Index)
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
		g, s := w.Groups[gi], slots[gi].get(a.Index)
		switch {
		case !view.nodeUp(a.NodeID):
			if until, holds, ok := unknownUntil(g, view.node(a.NodeID), view.now); ok {
				s.unknown, s.holds = a, holds
				rec.lookAgainAt(until)
				continue
			}
			rec.stop(a, reasonNodeDown, true)
			if s.replaced == "" {
				s.replaced = a.ID
			}
		case a.WorkloadVersion != w.Version && specs.changed(a.TaskGroup, g):
			if s.outdated != nil {
				rec.stop(a, reasonDuplicate, false)
				continue
			}
			s.outdated = a
		case s.keep == nil:
			s.keep = a
			if a.WorkloadVersion != w.Version {
				rec.inPlace = append(rec.inPlace, a)
			}
		case s.leaving == nil && s.keep.PreviousAlloc == a.ID && view.draining(a.NodeID):
			s.leaving = a // a is being moved off its node; s.keep replaces it
		case s.leaving == nil && a.PreviousAlloc == s.keep.ID && view.draining(s.keep.NodeID):
			s.leaving, s.keep = s.keep, a
		default:
			loser := s.keep
			if s.prefers(g, a) {
				s.keep = a
			} else {
				loser = a
			}
			rec.stop(loser, reasonDuplicate, false)
		}
	}

	roll := newRolling(w, d, allocs, view.now)
	mv := newMover(w, allocs, view)
	for gi, g := range w.Groups {
		moving := mv.plan(&rec, g, slots[gi])
		var place intentList
		kept := 0
		rolled := roll.group(g, slots[gi], &rec)
		next := 0 // the indices below next are decided
		for idx, s := range slots[gi].inOrder() {
			place.addFresh(next, idx-next) // no allocation: a new replica each
			next = idx + 1
			if s.keep != nil || s.holds {
				kept++
			}
			if prev, ok := moving[idx]; ok {
				place.add(placeIntent{index: idx, previous: prev})
				continue
			}
			if s.outdated != nil {
				if !rolled[idx] {
					continue
				}
				if s.keep == nil && s.dead == nil {
					place.add(placeIntent{index: idx, previous: s.outdated.ID})
					continue
				}
			}
			if intent, ok := s.intent(idx, g, w.Version, byID, view.now, &rec); ok {
				place.add(intent)
			}
		}
		place.addFresh(next, slots[gi].replicas-next)
		if place.len() > 0 {
			rec.groups = append(rec.groups, groupIntents{group: g, place: place, kept: kept})
		}
	}
	rec.deployment = roll.progress()
	return rec
}

// unknownUntil says whether a live allocation on a down node stays
// "unknown" (ok) rather than lost, until when, and whether it holds its
// index meanwhile (no replacement). An at-most-once copy is unknown until
// its node's lease has surely expired (lease.ServerReplaceAfter), and
// holds its index; any other until the group's lostAfter has passed since
// the node went down, holding its index unless disconnect.replace.
func unknownUntil(g *api.TaskGroup, n *api.Node, now time.Time) (until time.Time, holds, ok bool) {
	if n == nil || n.LastHeartbeat.IsZero() {
		return time.Time{}, false, false // purged, or never timed: lost
	}
	dp := g.DisconnectPolicyOf()
	downAt := n.LastHeartbeat.Add(n.LeaseTTL)
	until = downAt.Add(dp.LostAfter)
	holds = !dp.Replace
	if g.AtMostOnce {
		safe := lease.ServerReplaceAfter(lease.Defaults(), n.LastHeartbeat, n.LeaseTTL, g.StopGrace())
		if safe.After(until) {
			until = safe
		}
		holds = true
	}
	return until, holds, now.Before(until)
}

// prefers reports whether a live allocation a should stay instead of
// s.keep, both on reachable nodes for one index. When one replaced the
// other — its node came back after the copy was replaced — the group's
// disconnect.reconcile decides; otherwise the first by ID stays.
func (s *slot) prefers(g *api.TaskGroup, a *api.Allocation) bool {
	replacement := a.PreviousAlloc == s.keep.ID
	if !replacement && s.keep.PreviousAlloc != a.ID {
		return false
	}
	return replacement == (g.DisconnectPolicyOf().Reconcile != api.KeepOriginal)
}

// intent decides whether index idx needs a new allocation, and which
// allocation it replaces; a failed allocation's replacement follows the
// group's reschedule policy.
func (s slot) intent(idx int, g *api.TaskGroup, version uint64, byID map[string]*api.Allocation, now time.Time, rec *reconciliation) (placeIntent, bool) {
	switch {
	case s.keep != nil, s.holds:
		return placeIntent{}, false
	case s.replaced != "":
		return placeIntent{index: idx, previous: s.replaced}, true
	case s.unknown != nil:
		return placeIntent{index: idx, previous: s.unknown.ID}, true
	case s.dead == nil:
		return placeIntent{index: idx}, true
	}
	d := s.dead
	switch {
	case fenced(d), d.ClientStatus == api.AllocLost:
		return placeIntent{index: idx, previous: d.ID}, true
	case d.ClientStatus == api.AllocFailed:
		v := reschedule.Decide(g.ReschedulePolicyOf(), g.RestartPolicy.Mode, d.ClientStatusTime, earlierFailures(d, version, byID), now)
		switch {
		case !v.Replace:
			if d.DesiredStatus == api.DesiredRun {
				rec.stop(d, v.Dead, false) // says why the replica is dead
			}
			return placeIntent{}, false
		case v.At.After(now):
			rec.lookAgainAt(v.At)
			return placeIntent{}, false
		}
		return placeIntent{index: idx, previous: d.ID}, true
	case d.ClientStatus == api.AllocComplete && d.DesiredStatus == api.DesiredRun:
		return placeIntent{}, false // finished its work
	}
	return placeIntent{index: idx}, true
}

// earlierFailures returns the failure times of the failed allocations of
// workload version version before a along PreviousAlloc: each was
// replaced, so each is one reschedule. Fenced ones do not count.
// Allocations already garbage-collected end the chain; the hop bound
// guards against a corrupt cycle.
func earlierFailures(a *api.Allocation, version uint64, byID map[string]*api.Allocation) []time.Time {
	var out []time.Time
	a = byID[a.PreviousAlloc]
	for hops := 0; a != nil && hops <= len(byID); hops++ {
		if a.ClientStatus == api.AllocFailed && a.WorkloadVersion == version && !fenced(a) {
			out = append(out, a.ClientStatusTime)
		}
		a = byID[a.PreviousAlloc]
	}
	return out
}

// failuresInChain counts the failed allocations of workload version
// version from a back along PreviousAlloc, a included.
func failuresInChain(a *api.Allocation, version uint64, byID map[string]*api.Allocation) int {
	n := len(earlierFailures(a, version, byID))
	if a.ClientStatus == api.AllocFailed && a.WorkloadVersion == version && !fenced(a) {
		n++
	}
	return n
}
