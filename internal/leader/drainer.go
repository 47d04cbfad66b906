package leader

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/fsm"
	"github.com/strata-dev/strata/internal/state"
)

// drainer follows drains on the leader. The scheduler decides every move
// (internal/scheduler/moves.go: what moves, under which budget, and what
// stops at the deadline); the drainer only makes sure it is asked at the
// right moments and says when a drain is done:
//
//   - when a drain's deadline passes, it re-evaluates the workloads still
//     on the node (once per deadline and leadership);
//   - it keeps the set of workloads with allocations left on draining
//     nodes, so that an agent reporting one of their allocations running
//     (a replacement up, a budget freed) re-evaluates the workload
//     (trigger.Reports asks DrainWants);
//   - before the deadline, it begins the live migrations of what the drain
//     moves with its state, within the budgets (drainer_migrate.go);
//   - when nothing is left to move, it proposes drain-done: the node stays
//     ineligible (and quarantined, if it is).
//
// It is a thin shell around state reads: the decisions are the
// scheduler's, which keeps them deterministic and replayable, but for
// which migration begins when (the drainer's, under the same budget rule).
type drainer struct {
	l *Leader

	mu sync.Mutex
	// workloads have allocations left on a draining node.
	workloads map[string]bool
	// deadlineDone remembers, per node, the deadline whose evaluations
	// were proposed, so that they are proposed once.
	deadlineDone map[string]time.Time
	// fellBack remembers the failed drain migrations whose allocations
	// were handed back to the scheduler (drainer_migrate.go).
	fellBack map[string]bool
}

func newDrainer(l *Leader) *drainer {
	return &drainer{l: l, workloads: map[string]bool{}, deadlineDone: map[string]time.Time{}, fellBack: map[string]bool{}}
}

// begin forgets the last term's: a new leader re-checks every deadline
// and hands back every failed migration.
func (d *drainer) begin() {
	d.mu.Lock()
	d.deadlineDone = map[string]time.Time{}
	d.fellBack = map[string]bool{}
	d.mu.Unlock()
}

// wantsEval reports whether workload has allocations left on a draining
// node, so that a change of its allocations may let a drain move on.
func (d *drainer) wantsEval(workload string) bool { // workload: fsm.Qualified(namespace, name)
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.workloads[workload]
}

// step checks every draining node once; what fails is retried at the
// next step.
func (d *drainer) step(context.Context) error {
	l := d.l
	snap := l.state().Snapshot()
	now := l.cfg.Now()
	var failed []error
	workloads := map[string]bool{}
	budgets := map[groupKey]int{}
	for _, n := range snap.Nodes() {
		if n.Drain == nil {
			continue
		}
		left := leftOnNode(snap, n)
		for _, a := range left {
			workloads[fsm.Qualified(a.Namespace, a.Workload)] = true
		}
		if len(left) == 0 {
			done := *n.Drain
			if _, err := l.propose(&fsm.NodeOp{Op: fsm.NodeOpDrainDone, NodeID: n.ID, Drain: &done, Time: now}); err != nil {
				failed = append(failed, fmt.Errorf("end the drain of node %s: %w", n.ID, err))
			} else {
				l.logger.Info("drain complete", "node", n.ID, "name", n.Name)
			}
			continue
		}
		if now.Before(n.Drain.Deadline) {
			if err := d.migrations(snap, n, left, budgets); err != nil {
				failed = append(failed, err)
			}
			continue
		}
		if d.deadlineProposed(n.ID, n.Drain.Deadline) {
			continue
		}
		if _, err := l.propose(l.make.DrainMoves(left, n.ID)); err != nil {
			failed = append(failed, fmt.Errorf("evaluations at the drain deadline of node %s: %w", n.ID, err))
			continue
		}
		d.mu.Lock()
		d.deadlineDone[n.ID] = n.Drain.Deadline
		d.mu.Unlock()
		l.logger.Info("drain deadline: stopping what is left", "node", n.ID, "name", n.Name, "allocations", len(left))
	}
	d.mu.Lock()
	d.workloads = workloads
	d.mu.Unlock()
	return errors.Join(failed...)
}

func (d *drainer) deadlineProposed(node string, deadline time.Time) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	done, ok := d.deadlineDone[node]
	return ok && done.Equal(deadline)
}

// leftOnNode lists what node n's drain still has to move: allocations
// that hold the node, except those the drain keeps. On a node that is down
// an allocation already told to stop is not waited for: no agent will
// report it stopped (purge the node if it is gone for good).
func leftOnNode(snap *state.Snapshot, n *api.Node) []*api.Allocation {
	var out []*api.Allocation
	for _, a := range snap.AllocsByNode(n.ID) {
		if a.Terminal() || (!n.Alive() && a.DesiredStatus == api.DesiredStop) {
			continue
		}
		if wl := snap.Workload(a.Namespace, a.Workload); wl != nil && n.Drain.Keeps(wl.PriorityClass) {
			continue
		}
		out = append(out, a)
	}
	return out
}
