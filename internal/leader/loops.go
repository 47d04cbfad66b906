package leader

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"
)

// Loop is one of the leader's loops: it runs while this server leads,
// started when a term begins and stopped (its context cancelled) when the
// term ends. A loop is either periodic — Step every Every, and when Wake
// fires — or runs on its own (Run: the workers and the plan applier wait
// on their queues). Every loop reports itself in
// strata_leader_loop_running{loop}; a periodic one also counts its steps
// by outcome in strata_leader_loop_steps_total{loop,outcome}.
type Loop struct {
	// Name names the loop in metrics and logs.
	Name string
	// Begin, when set, runs at the start of every term, before the loop:
	// a loop forgets there what it knew of the last term.
	Begin func()

	// Every is the period of Step; AtStart steps once at once too.
	Every   time.Duration
	AtStart bool
	// Wake, when set, runs Step now (a kick that must not wait a period).
	Wake <-chan struct{}
	// Step does one pass; an error is logged and counted, and the next
	// pass retries.
	Step func(ctx context.Context) error

	// Run, for a loop that waits on its own, runs until ctx ends; Count
	// runs it that many times in parallel (default 1).
	Run   func(ctx context.Context)
	Count int
}

// table is the leader's loops, one line each, with why it is a loop of
// the leader (it acts on the whole cell, and one server must act).
//
// Adding a loop is one line here plus its code: write its Step (or Run)
// as a method of the concept it follows (say, rebalancer.go), give it a
// Name, and, for a periodic one, a Config interval with its default in
// New. TestLoopTable checks every entry; its metrics come with it.
func (l *Leader) table() []Loop {
	return []Loop{
		// The single writer of placements: plans commit one at a time.
		{Name: "plan-applier", Run: l.plans.run},
		// Schedulers in parallel, optimistically; the applier arbitrates.
		{Name: "worker", Run: l.runWorker, Count: l.cfg.Workers},
		// Evaluations a worker failed on (a raft error), again after a pause.
		{Name: "retry", Begin: l.retries.begin, Every: retryPause / 4, Step: l.requeue},
		// Node liveness: nodes past their TTL go down, their work moves.
		{Name: "heartbeats", Begin: l.beginHeartbeats, Every: l.beats.policy.MinTTL / 4, Step: l.checkHeartbeats},
		// Drains: deadlines, migrations, completion.
		{Name: "drainer", Begin: l.drainer.begin, Every: l.cfg.DrainInterval, AtStart: true, Step: l.drainer.step},
		// Nodes that fail far more than the cell are fenced off.
		{Name: "auto-quarantine", Every: l.cfg.QuarantineInterval, Step: l.quarantines.step},
		// Finished allocations, evaluations and deployments past retention.
		{Name: "gc", Every: l.cfg.GCInterval, Step: l.collectGarbage},
		// Failed deployments whose groups ask for autoRevert.
		{Name: "auto-revert", Begin: l.reverts.begin, Every: 5 * time.Second, AtStart: true, Wake: l.reverts.wake, Step: l.reverts.step},
		// The cell's trouble correlated into incidents, and the rollout
		// guard of every deployment under way, which asks them first.
		{Name: "incidents", Begin: l.correlation.begin, Every: l.cfg.IncidentInterval, AtStart: true, Step: l.correlation.step},
		// The control plane's own signals against their recent normal.
		{Name: "anomalies", Begin: l.anomalies.begin, Every: l.cfg.AnomalyInterval, Step: l.anomalies.step},
	}
}

// checkLoops says what is wrong with a table, nil when nothing is.
func checkLoops(loops []Loop) error {
	names := map[string]bool{}
	var errs []error
	for _, lp := range loops {
		switch {
		case lp.Name == "":
			errs = append(errs, errors.New("a loop without a name"))
		case names[lp.Name]:
			errs = append(errs, fmt.Errorf("loop %q twice", lp.Name))
		case (lp.Run == nil) == (lp.Step == nil):
			errs = append(errs, fmt.Errorf("loop %q: give it Run or Step, one of them", lp.Name))
		case lp.Step != nil && lp.Every <= 0:
			errs = append(errs, fmt.Errorf("loop %q: a Step without a period", lp.Name))
		}
		names[lp.Name] = true
	}
	return errors.Join(errs...)
}

// start runs every loop of the table under ctx, the term's.
func (l *Leader) start(ctx context.Context) {
	for _, lp := range l.loops {
		if lp.Begin != nil {
			lp.Begin()
		}
		for range max(lp.Count, 1) {
			l.wg.Add(1)
			go func() {
				defer l.wg.Done()
				l.runLoop(ctx, lp)
			}()
		}
	}
}

// runLoop runs one loop until ctx ends.
func (l *Leader) runLoop(ctx context.Context, lp Loop) {
	running := l.metrics.loopRunning.WithLabelValues(lp.Name)
	running.Inc()
	defer running.Dec()
	if lp.Run != nil {
		lp.Run(ctx)
		return
	}
	step := func() {
		outcome := "ok"
		defer func() {
			// A bug in one pass (the scheduler a drain's migration asks)
			// must not take the leader down: it is logged with its stack,
			// counted, and the next pass tries again.
			if v := recover(); v != nil {
				outcome = "panic"
				l.logger.Error("leader loop: "+lp.Name+" panicked; will retry", "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			}
			l.metrics.loopSteps.WithLabelValues(lp.Name, outcome).Inc()
		}()
		if err := lp.Step(ctx); err != nil {
			outcome = "error"
			if ctx.Err() == nil {
				l.logger.Warn("leader loop: "+lp.Name+"; will retry", "err", err)
			}
		}
	}
	tick := time.NewTicker(lp.Every)
	defer tick.Stop()
	if lp.AtStart {
		step()
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-lp.Wake:
		}
		step()
	}
}
