package scheduler

import (
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/disruption"
)

// mover decides a workload's voluntary moves: replicas whose node is being
// drained (or quarantined) move elsewhere, at most as many at once as
// their group's disruption budget allows (internal/disruption), and each
// move places the replacement first: the old allocation stops only once
// its replacement runs (reconcile sees the pair in one slot, keep and
// leaving). A replacement that cannot be placed leaves the old allocation
// running; at the drain's deadline whatever is left is stopped and
// replaced like any stopped replica.
//
// This is stop-and-replace. A replica that can move with its state
// (DrainMigrates: checkpoint/restore, docs/migration.md) is left to the
// leader's drainer, which migrates it within the same budget: a migration
// in flight counts here as a move in flight, and the deadline stops it
// like any allocation left. One whose migration failed or was aborted
// moves by stop-and-replace.
//
// A group that declares atMostOnce never has two copies of a replica
// running, so its moves are stop-then-place: the old allocation stops
// (spending the budget like any replica out of service) and the index is
// held until the old copy has stopped; only then is its replacement
// placed. The same holds for what a deadline stops.
//
// Gang groups do not move replica by replica before the deadline: a gang
// member cannot leave its gang without breaking it. They stay until the
// deadline, then are stopped and re-placed as a gang.
type mover struct {
	w     *api.Workload
	nodes func(string) *api.Node
	now   time.Time
	// failed counts, per allocation being moved, its replacements of the
	// workload's current version that failed: after MaxReschedules the
	// allocation stays until the deadline instead of being moved again.
	failed map[string]int
}

func newMover(w *api.Workload, allocs []*api.Allocation, view clusterView) *mover {
	m := &mover{w: w, nodes: view.node, now: view.now}
	for _, a := range allocs {
		if a.PreviousAlloc != "" && a.ClientStatus == api.AllocFailed && a.WorkloadVersion == w.Version {
			if m.failed == nil {
				m.failed = map[string]int{}
			}
			m.failed[a.PreviousAlloc]++
		}
	}
	return m
}

// serving reports whether an allocation serves its replica: wanted
// running, running, and ready where its agent reports health
// (disruption.Serving). A move's old allocation stops only once its
// replacement serves.
func serving(a *api.Allocation) bool { return disruption.Serving(a) }

// drainOf returns the drain that wants a off its node, or nil: no drain,
// or one that keeps a's workload (system workloads under keepSystem).
func (m *mover) drainOf(a *api.Allocation) *api.DrainSpec {
	n := m.nodes(a.NodeID)
	if n == nil || n.Drain == nil || n.Drain.Keeps(m.w.PriorityClass) {
		return nil
	}
	return n.Drain
}

// pastDeadline reports whether a's drain, if any, has run out of time;
// a drain still running asks for another look at its deadline.
func (m *mover) pastDeadline(rec *reconciliation, a *api.Allocation) bool {
	d := m.drainOf(a)
	if d == nil {
		return false
	}
	if m.now.Before(d.Deadline) {
		rec.lookAgainAt(d.Deadline)
		return false
	}
	return true
}

// plan settles the moves of group g (its slots, which it updates): a move
// whose replacement runs stops its old allocation, a drain past its
// deadline stops what is left on its node, and new moves start within the
// budget. It returns, per replica index, the allocation a move starting
// now replaces; those stay live until their replacement runs.
func (m *mover) plan(rec *reconciliation, g *api.TaskGroup, slots *slotTable) map[int]string {
	budget := disruption.Group{Desired: slots.replicas, MaxUnavailable: disruption.MaxUnavailable(g)}
	var candidates []int
	for idx, s := range slots.inOrder() { // an index without allocations has nothing to move
		if m.awaitsStop(rec, g, s) {
			s.holds = true // its replacement waits until the old copy has stopped
			budget.Moving++
			continue
		}
		if s.leaving != nil {
			switch {
			case serving(s.keep):
				rec.stop(s.leaving, reasonMoved, false)
				s.leaving = nil
			case m.pastDeadline(rec, s.leaving):
				rec.stop(s.leaving, reasonDrainDeadline, false)
				s.leaving = nil
			}
		}
		if s.leaving == nil && s.keep != nil && m.pastDeadline(rec, s.keep) {
			rec.stop(s.keep, reasonDrainDeadline, false)
			if g.AtMostOnce {
				s.keep, s.holds = nil, true
				continue
			}
			s.replaced, s.keep = s.keep.ID, nil
		}
		if serving(s.keep) || serving(s.leaving) {
			budget.Serving++
		}
		switch {
		case s.leaving != nil:
			budget.Moving++
		case s.keep != nil && s.keep.Migration.Active():
			budget.Moving++ // a migration in flight is a move in flight
		case s.keep != nil && m.drainOf(s.keep) != nil && g.Gang == nil && m.failed[s.keep.ID] <= MaxReschedules &&
			!DrainMigrates(s.keep, m.nodes(s.keep.NodeID), m.drainOf(s.keep)):
			candidates = append(candidates, idx) // those that migrate are the drainer's
		}
	}
	n := min(len(candidates), disruption.Allowed(budget))
	if n == 0 {
		return nil
	}
	out := make(map[int]string, n)
	for _, idx := range candidates[:n] {
		s := slots.at[idx]
		if g.AtMostOnce {
			rec.stop(s.keep, reasonMovedAway, false)
			s.keep, s.holds = nil, true
			continue
		}
		out[idx] = s.keep.ID
	}
	return out
}

// awaitsStop reports whether slot s of an at-most-once group holds an
// allocation a move, a drain deadline or an update stopped, whose agent has not yet
// reported it stopped: its replacement must wait. If its node went down
// meanwhile, it waits as long as a silent copy would (the node's lease
// must surely have ended, unknownUntil), then the replacement goes ahead.
func (m *mover) awaitsStop(rec *reconciliation, g *api.TaskGroup, s *slot) bool {
	d := s.dead
	if !g.AtMostOnce || s.keep != nil || d == nil || d.Terminal() || d.DesiredStatus != api.DesiredStop {
		return false
	}
	if d.DesiredReason != reasonMovedAway && d.DesiredReason != reasonDrainDeadline && d.DesiredReason != reasonUpdatedStopFirst {
		return false
	}
	n := m.nodes(d.NodeID)
	if n != nil && n.Status != api.NodeDown {
		return true
	}
	until, _, ok := unknownUntil(g, n, m.now)
	if ok {
		rec.lookAgainAt(until)
	}
	return ok
}

// dropEarlierIncarnation removes from allocs those of an earlier workload
// of the same name (one that was purged): they were created before w was
// first registered. Live ones are stopped; none is ever adopted as one of
// w's replicas, nor counted in its failure chains.
func dropEarlierIncarnation(rec *reconciliation, w *api.Workload, allocs []*api.Allocation) []*api.Allocation {
	out := allocs[:0:0]
	for _, a := range allocs {
		if a.CreateIndex != 0 && a.CreateIndex < w.CreateIndex {
			if live(a) {
				rec.stop(a, reasonPurged, false)
			}
			continue
		}
		out = append(out, a)
	}
	return out
}
