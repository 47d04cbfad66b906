package fsm

import (
	"time"

	"github.com/strata-dev/strata/internal/gc"
	"github.com/strata-dev/strata/internal/state"
)

// CollectGarbage names finished allocations, evaluations and deployments
// internal/gc chose to delete; the FSM deletes each only if it is still
// finished (state.CollectGarbage).
type CollectGarbage struct {
	gc.Garbage
	Time time.Time `json:"time"`
}

func applyCollectGarbage(w *state.WriteTxn, c *CollectGarbage) error {
	_, err := w.CollectGarbage(c.Allocs, c.Evals, c.Deployments)
	return err
}
