package leader

import (
	"context"
	"fmt"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/fsm"
	"github.com/strata-dev/strata/internal/scheduler"
	"github.com/strata-dev/strata/internal/state"
)

// What the HTTP API asks of the leader. Each is safe from any goroutine;
// none serves HTTP.

// Heartbeat renews node's lease at now: the node heartbeated or
// registered. It returns the interval the node should heartbeat at and
// the TTL after which it is down (also the lease's length).
func (l *Leader) Heartbeat(node string, now time.Time) (interval, ttl time.Duration) {
	l.metrics.heartbeats.Inc()
	return l.beats.Reset(node, now)
}

// Forget stops tracking node's heartbeats (it was purged).
func (l *Leader) Forget(node string) { l.beats.Forget(node) }

// DrainWants reports whether workload (fsm.Qualified) has allocations
// left on a draining node: a change of its allocations may let the drain
// move on (trigger.Reports).
func (l *Leader) DrainWants(workload string) bool { return l.drainer.wantsEval(workload) }

// CommitMove commits a migration's step. A commit of a move is a
// placement on the target, so the single writer of placements checks and
// commits it, between plans (invariant 2): a target that no longer has
// room turns it into an abort. It returns the entry's index and the FSM's
// answer (fsm.Migrated).
func (l *Leader) CommitMove(ctx context.Context, cmd *fsm.Migrate) (uint64, any, error) {
	if cmd.Op != api.MigrationOpCommit {
		return l.proposer.Propose(cmd)
	}
	var idx uint64
	var answer any
	_, err := l.plans.Do(ctx, func() (any, error) {
		snap := l.state().Snapshot()
		if a := snap.Alloc(cmd.AllocID); a != nil && a.Migration.Active() && a.Migration.ID == cmd.MigrationID {
			target := snap.Node(a.Migration.TargetNode)
			moved := []*api.Allocation{movedTo(a, &api.Node{ID: a.Migration.TargetNode}, a.Migration.TargetAssignment)}
			if ok, why := scheduler.CheckNode(target, snap.AllocsByNode(a.Migration.TargetNode), nil, moved); !ok {
				cmd.Op, cmd.Reason = api.MigrationOpAbort, "the target node no longer has room: "+why
			}
		}
		var err error
		idx, answer, err = l.proposer.Propose(cmd)
		return nil, err
	})
	return idx, answer, err
}

// DryRun runs the scheduler on snap as a worker would for eval, without
// committing anything (`strata plan`): view wraps the leader's node
// tables of snap (the planned version in place of the stored one).
func (l *Leader) DryRun(snap *state.Snapshot, view func(scheduler.State) scheduler.State, eval *api.Evaluation, now time.Time) *api.Plan {
	return l.cfg.schedule(view(l.nodeTables.Bind(snap)), eval, scheduler.Options{Seed: evalSeed(eval.ID, 0), Now: now,
		Cell: snap.CellConfig(), Policies: policies(snap)})
}

// Enqueue hands a pending evaluation to the broker (on the leader; a
// follower's broker drops it).
func (l *Leader) Enqueue(e *api.Evaluation) { l.broker.Enqueue(e) }

// Unblock re-queues every blocked evaluation: capacity changed.
func (l *Leader) Unblock() { l.broker.Unblock() }

// BrokerStats reports the broker's queues: evaluations ready for a
// worker, in flight, and blocked waiting for capacity.
func (l *Leader) BrokerStats() (ready, inflight, blocked int) { return l.broker.Stats() }

// StepNow runs one pass of the periodic loop name now, beside its own
// schedule (tests, and an operator who will not wait a period). A loop's
// Step is safe to run so.
func (l *Leader) StepNow(ctx context.Context, name string) error {
	for _, lp := range l.loops {
		if lp.Name == name && lp.Step != nil {
			return lp.Step(ctx)
		}
	}
	return fmt.Errorf("no periodic leader loop %q", name)
}
