package leader

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
)

// beginHeartbeats starts a term's checks: the down guard learns their
// period (its stall credit), and the starvation the last term saw is
// forgotten.
func (l *Leader) beginHeartbeats() {
	l.beats.CheckEvery(l.beats.policy.MinTTL / 4)
	l.wasStarved.Store(false)
}

// checkHeartbeats marks nodes down when their TTL expires and asks for
// their workloads to be re-evaluated, so lost allocations get
// replacements. A node that could not be marked down is due again at the
// next check.
func (l *Leader) checkHeartbeats(ctx context.Context) error {
	due := l.beats.Expired(l.cfg.Now())
	if g := l.beats.GuardState(l.cfg.Now()); l.wasStarved.Swap(g.starved) != g.starved {
		msg, level := "heartbeat guard: heartbeats handled on time again", slog.LevelInfo
		if g.starved {
			msg, level = "heartbeat guard: this leader is starved; deferring node downs", slog.LevelWarn
		}
		l.logger.Log(ctx, level, msg, "handled_per_second", g.handledPerSecond,
			"expected_per_second", g.expectedPerSecond, "mean_late", g.meanLate, "kept_so_far", g.kept)
	}
	var failed []error
	for _, id := range due {
		l.metrics.heartbeatsMissed.Inc()
		if err := l.markNodeDown(id, "missed heartbeats for longer than its TTL"); err != nil {
			failed = append(failed, fmt.Errorf("mark node %s down: %w", id, err))
			l.beats.Retry(id, l.cfg.Now()) // due again at the next check
		}
	}
	return errors.Join(failed...)
}

func (l *Leader) markNodeDown(id, reason string) error {
	snap := l.state().Snapshot()
	last, lease := l.beats.Renewed(id)
	cmd := l.make.NodeDown(snap, id, reason, last, lease)
	if cmd == nil {
		return nil
	}
	if _, err := l.propose(cmd); err != nil {
		return err
	}
	l.logger.Warn("node down", "node", id, "name", snap.Node(id).Name, "reason", reason, "evals", len(cmd.Evals))
	return nil
}
