package server

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"hash/fnv"
	"slices"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/scheduler"
)

// maxPlanAttempts bounds how often a worker recomputes a plan whose nodes the
// plan applier rejected (another worker's plan got there first).
const maxPlanAttempts = 5

// worker runs the pure scheduler for evaluations from the broker and hands
// plans to the plan applier. Several run in parallel, optimistically: they
// never write state themselves.
type worker struct {
	srv *Server
	id  int
	// scratch is the scheduler's working memory, reused by this worker's
	// evaluations, which run one at a time.
	scratch scheduler.Scratch
}

func (w *worker) run(ctx context.Context) {
	for {
		e, err := w.srv.broker.Dequeue(ctx)
		if err != nil {
			return
		}
		if !e.CreateTime.IsZero() {
			w.srv.metrics.evalWait.Observe(time.Since(e.CreateTime).Seconds())
		}
		start := time.Now()
		blocked, err := w.process(ctx, e)
		w.srv.metrics.evalProcess.Observe(time.Since(start).Seconds())
		failed := err != nil && ctx.Err() == nil
		if failed {
			w.srv.logger.Error("evaluation failed; retrying", "eval", e.ID, "workload", e.Workload, "err", err)
		}
		superseded := w.srv.broker.Ack(e, blocked)
		if failed && !blocked {
			// Not lost: the evaluation is still pending in state; try again
			// after a pause (a newer evaluation of the workload supersedes it).
			retry := e
			time.AfterFunc(time.Second, func() { w.srv.broker.Enqueue(retry) })
		}
		if len(superseded) > 0 && ctx.Err() == nil {
			w.completeSuperseded(superseded, e.ID)
		}
	}
}

// process schedules one evaluation until its plan is fully committed (or the
// attempts run out) and records the evaluation's outcome with the plan.
func (w *worker) process(ctx context.Context, e *api.Evaluation) (blocked bool, err error) {
	var attempts []api.ScheduleAttempt
	if stored := w.srv.State().Snapshot().Eval(e.ID); stored != nil {
		attempts = stored.Attempts // earlier runs of a re-queued evaluation
	}
	for attempt := 0; attempt < maxPlanAttempts; attempt++ {
		snap := w.srv.State().Snapshot()
		try := api.ScheduleAttempt{Seed: evalSeed(e.ID, attempt), IDNonce: randomNonce(), SnapshotIndex: snap.Index()}
		attempts = appendAttempt(attempts, try)
		plan := scheduler.Schedule(w.srv.nodeTables.Bind(snap), e, scheduler.Options{Seed: try.Seed, IDNonce: try.IDNonce, Now: w.srv.cfg.Now(),
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

		res, err := w.srv.plans.Submit(ctx, plan, &final)
		if err != nil {
			return false, err
		}
		if len(res.Rejected) == 0 {
			w.srv.metrics.scheduler.observeFinal(plan)
			return final.Status == api.EvalBlocked, nil
		}
		w.srv.logger.Debug("plan partly rejected; retrying on a fresher snapshot",
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
	if _, err := w.srv.propose(cmdUpsertEvals, &upsertEvalsCmd{Evals: []*api.Evaluation{&final}}); err != nil {
		return true, err
	}
	return true, errors.New(final.StatusDescription)
}

func (w *worker) waitForIndex(ctx context.Context, index uint64) error {
	deadline := time.Now().Add(10 * time.Second)
	for w.srv.State().Index() < index {
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
	if _, err := w.srv.propose(cmdUpsertEvals, &upsertEvalsCmd{Evals: updates}); err != nil {
		w.srv.logger.Error("complete superseded evaluations", "err", err)
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
