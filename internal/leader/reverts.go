package leader

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/strata-dev/strata/api"
)

// reverts is the leader's auto-revert loop: a deployment the scheduler
// failed (deadline passed) whose groups ask for autoRevert gets its
// workload's last stable version registered again. A plan that fails a
// deployment wakes it (kick); a periodic pass covers a leader change in
// between.
type reverts struct {
	l    *Leader
	wake chan struct{}

	mu sync.Mutex // one pass at a time (StepNow beside the loop)
	// tried are the deployments this term reverted (or tried to), reset
	// with the term.
	tried map[string]bool
}

func newReverts(l *Leader) *reverts {
	return &reverts{l: l, wake: make(chan struct{}, 1), tried: map[string]bool{}}
}

func (r *reverts) begin() {
	r.mu.Lock()
	r.tried = map[string]bool{}
	r.mu.Unlock()
}

// kick wakes the loop without blocking.
func (r *reverts) kick() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

func (r *reverts) step(context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := r.l
	snap := l.state().Snapshot()
	var failed []error
	for _, d := range snap.Deployments(nil) {
		if d.Status != api.DeploymentFailed || d.RevertedTo != 0 || !d.AutoRevert() || r.tried[d.ID] {
			continue
		}
		r.tried[d.ID] = true
		cmd := l.make.Revert(snap, d, d.StatusDescription, true)
		if cmd.Revert == nil {
			continue
		}
		if _, err := l.propose(cmd); err != nil {
			failed = append(failed, fmt.Errorf("auto-revert deployment %s of %s: %w", d.ID, d.Workload, err))
			delete(r.tried, d.ID)
		}
	}
	return errors.Join(failed...)
}
