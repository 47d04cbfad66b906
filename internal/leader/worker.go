package leader

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"runtime/debug"
	"slices"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/fsm"
	"github.com/strata-dev/strata/internal/scheduler"
)

// maxPlanAttempts bounds how often a worker recomputes a plan whose nodes the
// plan applier rejected (another worker's plan got there first).
const maxPlanAttempts = 5

// worker runs the pure scheduler for evaluations from the broker and hands
// plans to the plan applier. Several run in parallel, optimistically: they
// never write state themselves.
type worker struct {
	l *Leader
	// scratch is the scheduler's working memory, reused by this worker's
	// evaluations, which run one at a time.
	scratch scheduler.Scratch
}

// runWorker is one worker of the loop table.
func (l *Leader) runWorker(ctx context.Context) { (&worker{l: l}).run(ctx) }

func (w *worker) run(ctx context.Context) {
	for {
		e, err := w.l.broker.Dequeue(ctx)
		if err != nil {
			return
		}
		if !e.CreateTime.IsZero() {
			w.l.metrics.evalWait.Observe(time.Since(e.CreateTime).Seconds())
		}
		start := time.Now()
		blocked, err := w.processGuarded(ctx, e)
		w.l.metrics.evalProcess.Observe(time.Since(start).Seconds())
		failed := err != nil && ctx.Err() == nil
		if failed {
			w.l.logger.Error("evaluation failed; retrying", "eval", e.ID, "workload", e.Workload, "err", err)
		}
		superseded := w.l.broker.Ack(e, blocked)
		if failed && !blocked {
			// Not lost: the evaluation is still pending in state; the
			// "retry" loop tries it again after a pause (a newer evaluation
			// of the workload supersedes it).
			w.l.retries.later(e, time.Now())
		}
		if len(superseded) > 0 && ctx.Err() == nil {
			w.completeSuperseded(superseded, e.ID)
		}
	}
}

// processGuarded is process that survives a panic of the scheduler (or of
// the plan applier on its plan): the evaluation is stored failed with the
// panic and its stack, counted in strata_scheduler_panics_total, and not
// retried; a new leader does not take it again either (it is not pending).
// Without it, one evaluation that trips a scheduler bug kills the leader,
// and every leader after it.
func (w *worker) processGuarded(ctx context.Context, e *api.Evaluation) (blocked bool, err error) {
	defer func() {
		if p := recover(); p != nil {
			blocked, err = false, w.failPanicked(e, fmt.Sprint(p), debug.Stack())
		}
	}()
	blocked, err = w.process(ctx, e)
	var pe *panicError
	if errors.As(err, &pe) {
		return false, w.failPanicked(e, pe.value, pe.stack)
	}
	return blocked, err
}

// maxPanicReport bounds the stack an evaluation keeps of its panic.
const maxPanicReport = 8 << 10

// failPanicked stores e failed with what panicked; an error (the proposal
// failed) lets the worker retry e later.
func (w *worker) failPanicked(e *api.Evaluation, value string, stack []byte) error {
	w.l.metrics.evalPanics.Inc()
	w.l.logger.Error("the scheduler panicked on an evaluation; it is failed, the leader goes on",
		"eval", e.ID, "workload", e.Workload, "panic", value, "stack", string(stack))
	report := fmt.Sprintf("the scheduler panicked: %s\n%s", value, stack)
	if len(report) > maxPanicReport {
		report = report[:maxPanicReport] + "…"
	}
	failed := *e
	if stored := w.l.state().Snapshot().Eval(e.ID); stored != nil {
		failed.Attempts = stored.Attempts
	}
	failed.Status, failed.StatusDescription = api.EvalFailed, report
	if _, err := w.l.propose(&fsm.UpsertEvals{Evals: []*api.Evaluation{&failed}}); err != nil {
		return fmt.Errorf("record the scheduler's panic: %w", err)
	}
	return nil
}

// panicError is a panic caught on another goroutine (the plan applier's)
// while it worked for this evaluation.
type panicError struct {
	value string
	stack []byte
}

func (p *panicError) Error() string { return "panic: " + p.value }

// process schedules one evaluation until its plan is fully committed (or the
// attempts run out) and records the evaluation's outcome with the plan.
func (w *worker) process(ctx context.Context, e *api.Evaluation) (blocked bool, err error) {
	var attempts []api.ScheduleAttempt
	if stored := w.l.state().Snapshot().Eval(e.ID); stored != nil {
		attempts = stored.Attempts // earlier runs of a re-queued evaluation
	}
	for attempt := 0; attempt < maxPlanAttempts; attempt++ {
		snap := w.l.state().Snapshot()
		try := api.ScheduleAttempt{Seed: evalSeed(e.ID, attempt), IDNonce: randomNonce(), SnapshotIndex: snap.Index()}
		attempts = appendAttempt(attempts, try)
		plan := w.l.cfg.schedule(w.l.nodeTables.Bind(snap), e, scheduler.Options{Seed: try.Seed, IDNonce: try.IDNonce, Now: w.l.cfg.Now(),
			Cell: snap.CellConfig(), Scratch: &w.scratch, Policies: policies(snap)})
		plan.EvalID, plan.SnapshotIndex = e.ID, snap.Index()

		final := *e
		final.Attempts = attempts
		final.Failures = plan.Failures
		final.Explanations = plan.Explanations
		final.Status, final.StatusDescription = api.EvalComplete, ""
		if len(plan.Failures) > 0 {
			final.Status = api.EvalBlocked
			final.StatusDescription = "some placements did not fit; retried when capacity changes"
		}

		res, err := w.l.plans.Submit(ctx, plan, &final)
		if err != nil {
			return false, err
		}
		if len(res.Rejected) == 0 {
			w.l.metrics.scheduler.observeFinal(plan)
			return final.Status == api.EvalBlocked, nil
		}
		w.l.logger.Debug("plan partly rejected; retrying on a fresher snapshot",
			"eval", e.ID, "attempt", attempt, "rejected", len(res.Rejected), "reasons", res.RejectReasons)
		// Wait until the state includes what was committed, then recompute.
		if err := w.waitForIndex(ctx, res.Index); err != nil {
			return false, err
		}
	}
	// Give up for now; the evaluation stays blocked and is retried on the
	// next capacity change.
	final := *e
	final.Attempts = attempts
	final.Status = api.EvalBlocked
	final.StatusDescription = "plan rejected repeatedly by the plan applier"
	if _, err := w.l.propose(&fsm.UpsertEvals{Evals: []*api.Evaluation{&final}}); err != nil {
		return true, err
	}
	return true, errors.New(final.StatusDescription)
}

func (w *worker) waitForIndex(ctx context.Context, index uint64) error {
	deadline := time.Now().Add(10 * time.Second)
	for w.l.state().Index() < index {
		if time.Now().After(deadline) {
			return errors.New("timed out waiting for state to reach the plan's index")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
	return nil
}

func (w *worker) completeSuperseded(evals []*api.Evaluation, by string) {
	var updates []*api.Evaluation
	for _, e := range evals {
		c := *e
		c.Status, c.StatusDescription, c.Failures = api.EvalComplete, "superseded by "+by, nil
		updates = append(updates, &c)
	}
	if _, err := w.l.propose(&fsm.UpsertEvals{Evals: updates}); err != nil {
		w.l.logger.Error("complete superseded evaluations", "err", err)
	}
}

// appendAttempt records try, keeping the newest api.MaxEvalAttempts.
func appendAttempt(attempts []api.ScheduleAttempt, try api.ScheduleAttempt) []api.ScheduleAttempt {
	out := append(slices.Clone(attempts), try)
	if len(out) > api.MaxEvalAttempts {
		out = out[len(out)-api.MaxEvalAttempts:]
	}
	return out
}

// randomNonce draws an attempt's allocation-id nonce (decision 7 of
// COORDINATION.md): ids of different attempts never collide, whatever the
// seed, and the nonce is recorded so the attempt can be replayed.
func randomNonce() uint64 {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return binary.LittleEndian.Uint64(b[:])
}

// evalSeed derives the scheduler's seed from the evaluation, so that a
// placement can be replayed from the evaluation id alone.
func evalSeed(id string, attempt int) int64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	return int64(h.Sum64()>>1) + int64(attempt)
}
