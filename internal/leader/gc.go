package leader

import (
	"context"

	"github.com/strata-dev/strata/internal/fsm"
	"github.com/strata-dev/strata/internal/gc"
)

// maxGarbagePerCommand bounds one command, so a first pass over a large
// backlog stays many small raft entries rather than one huge one.
const maxGarbagePerCommand = 2000

// collectGarbage runs one pass: it reads the state, asks internal/gc what
// is past its retention, and proposes the deletions in bounded commands.
func (l *Leader) collectGarbage(context.Context) error {
	if l.cfg.GC.Off {
		return nil
	}
	snap := l.state().Snapshot()
	now := l.cfg.Now()
	g := gc.Collect(gc.Input{Workload: snap.Workload, Allocs: snap.Allocs(nil), Evals: snap.Evals(nil), Deployments: snap.Deployments(nil)}, l.cfg.GC, now)
	for _, part := range splitGarbage(g, maxGarbagePerCommand) {
		if _, err := l.propose(&fsm.CollectGarbage{Garbage: part, Time: now}); err != nil {
			return err
		}
		l.metrics.collected.WithLabelValues("allocation").Add(float64(len(part.Allocs)))
		l.metrics.collected.WithLabelValues("evaluation").Add(float64(len(part.Evals)))
		l.metrics.collected.WithLabelValues("deployment").Add(float64(len(part.Deployments)))
	}
	if g.Len() > 0 {
		l.logger.Info("garbage collected", "allocations", len(g.Allocs), "evaluations", len(g.Evals), "deployments", len(g.Deployments))
	}
	return nil
}

// splitGarbage cuts g into parts of at most n objects.
func splitGarbage(g gc.Garbage, n int) []gc.Garbage {
	var parts []gc.Garbage
	var cur gc.Garbage
	flush := func() {
		if cur.Len() > 0 {
			parts = append(parts, cur)
			cur = gc.Garbage{}
		}
	}
	add := func(ids []string, into func(id string)) {
		for _, id := range ids {
			into(id)
			if cur.Len() >= n {
				flush()
			}
		}
	}
	add(g.Allocs, func(id string) { cur.Allocs = append(cur.Allocs, id) })
	add(g.Evals, func(id string) { cur.Evals = append(cur.Evals, id) })
	add(g.Deployments, func(id string) { cur.Deployments = append(cur.Deployments, id) })
	flush()
	return parts
}
