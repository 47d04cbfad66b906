package fsm

import (
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
