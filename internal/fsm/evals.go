package fsm

import (
	"errors"
	"fmt"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/state"
)

// UpsertEvals stores evaluations (new ones, or status updates).
type UpsertEvals struct {
	Evals []*api.Evaluation `json:"evals"`
}

func applyUpsertEvals(w *state.WriteTxn, c *UpsertEvals) error { return upsertEvals(w, c.Evals) }

func upsertEvals(w *state.WriteTxn, evals []*api.Evaluation) error {
	for _, e := range evals {
		if err := w.UpsertEval(e); err != nil {
			return err
		}
	}
	return nil
}

// RetryEval runs a failed evaluation again: Eval is the stored one made
// pending again by the proposer. An evaluation fails when its scheduling
// panicked; once the scheduler is fixed, an operator retries it.
type RetryEval struct {
	Eval *api.Evaluation `json:"eval"`
	Time time.Time       `json:"time"` // stamped by the proposer, for events
}

// ErrNotFailed refuses to retry an evaluation that did not fail: a pending
// one runs anyway, a complete or blocked one has its outcome.
var ErrNotFailed = errors.New("only a failed evaluation is retried")

func applyRetryEval(w *state.WriteTxn, c *RetryEval) error {
	if c.Eval == nil || c.Eval.Status != api.EvalPending {
		return errors.New("retry-evaluation: the evaluation must be pending")
	}
	stored := w.Snapshot().Eval(c.Eval.ID)
	switch {
	case stored == nil:
		return fmt.Errorf("%w: evaluation %s is gone", ErrNotFailed, c.Eval.ID)
	case stored.Status != api.EvalFailed:
		return fmt.Errorf("%w: evaluation %s is %s", ErrNotFailed, c.Eval.ID, stored.Status)
	}
	return w.UpsertEval(c.Eval)
}

func retryEvalEvents(snap *state.Snapshot, c *RetryEval) []api.Event {
	stored := snap.Eval(c.Eval.ID)
	if stored == nil {
		return nil
	}
	return []api.Event{{Time: c.Time, Type: api.EventEvalRetried, Namespace: api.NamespaceOf(stored.Namespace), Workload: stored.Workload,
		Message: fmt.Sprintf("evaluation %s retried; it had failed: %s", ShortID(stored.ID), firstLine(stored.StatusDescription))}}
}

// firstLine is s up to its first newline (a panic's stack follows it).
func firstLine(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			return s[:i]
		}
	}
	return s
}
