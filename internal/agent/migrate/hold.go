package migrate

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/strata-dev/strata/internal/agent/drivers"
)

// Verdict is what becomes of a task whose exit a migration holds.
type Verdict int

const (
	// Resume: no migration exit happened or it is over; an exit is the
	// task's own and the restart policy applies.
	Resume Verdict = iota
	// Gone: the task runs on the target now; its runner ends without a
	// word to the server (the allocation is not this node's).
	Gone
	// Restore: the move was aborted; restore the task here from its
	// image.
	Restore
	// Restart: the move was aborted and the task cannot be restored;
	// start it afresh here.
	Restart
)

// Hold makes a task runner wait, instead of applying its restart policy,
// when its task ends during a migration: criu's dump ends it, or a
// fallback stops it. The migration decides what follows (Decide).
type Hold struct {
	id       string
	once     sync.Once
	decided  chan struct{}
	verdict  Verdict
	imageDir string
	// settled is closed once the runner acted on the verdict (for a
	// restore: the task runs again or could not be restored).
	settled chan struct{}
}

// Decide gives the hold its verdict (imageDir: Restore's image); only the
// first call counts.
func (h *Hold) Decide(v Verdict, imageDir string) {
	h.once.Do(func() {
		h.verdict, h.imageDir = v, imageDir
		close(h.decided)
	})
}

// Settled is closed once the runner acted on the verdict.
func (h *Hold) Settled() <-chan struct{} { return h.settled }

// Outcome is what a held exit came to, for the task runner.
type Outcome int

const (
	NotHeld       Outcome = iota // no hold: the restart policy decides
	StartAfresh                  // start the task again now
	Running                      // the task runs again here, restored
	MovedAway                    // the task runs elsewhere: the runner ends silently
	Stopped                      // the task was told to stop meanwhile
	AgentStopping                // the agent goes away; the next one settles it
)

// HoldTarget is the task runner as its hold acts on it.
type HoldTarget interface {
	Config() *drivers.TaskConfig
	Driver() *drivers.Loaded
	Log() *slog.Logger
	// Restored: the task runs again under h, restored here.
	Restored(h *drivers.TaskHandle, message string)
	// Pending: the task ended with res and waits to start afresh.
	Pending(res *drivers.ExitResult, message string)
}

// Holds is one task runner's migration hold: the exited hook that claims
// the task's exit while a migration holds it. Its zero value, with its
// target set (SetTarget), is ready.
type Holds struct {
	target HoldTarget

	mu      sync.Mutex
	current *Hold
}

// SetTarget names the runner the hold acts on; call it once, before the
// runner runs.
func (hs *Holds) SetTarget(t HoldTarget) { hs.target = t }

// Hold installs a hold of migration id on the task.
func (hs *Holds) Hold(id string) *Hold {
	h := &Hold{id: id, decided: make(chan struct{}), settled: make(chan struct{})}
	hs.mu.Lock()
	hs.current = h
	hs.mu.Unlock()
	return h
}

// Held is the hold in place, nil when none.
func (hs *Holds) Held() *Hold {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return hs.current
}

// Release removes h when it is the hold in place.
func (hs *Holds) Release(h *Hold) {
	hs.mu.Lock()
	if hs.current == h {
		hs.current = nil
	}
	hs.mu.Unlock()
}

// restoreRetry bounds how long a local restore retries: on one host the
// target may still hold the image's pids for a moment.
const restoreRetry = 10 * time.Second

// Exited claims an exit that happened while a migration held the task,
// waits for the migration's verdict (or ctx, or stop: the task told to
// stop for good) and acts on it. It is the task runner's exited hook.
func (hs *Holds) Exited(ctx context.Context, res *drivers.ExitResult, stop <-chan struct{}) Outcome {
	h := hs.Held()
	if h == nil {
		return NotHeld
	}
	// settled is closed once the verdict is acted on, not when the task
	// ends: a restored task runs on after this returns.
	var once sync.Once
	settle := func() { once.Do(func() { close(h.settled) }) }
	defer settle()
	select {
	case <-ctx.Done():
		return AgentStopping
	case <-stop:
		hs.Release(h)
		return Stopped
	case <-h.decided:
	}
	hs.Release(h)
	switch h.verdict {
	case Gone:
		hs.target.Log().Info("task moved away", "migration", h.id)
		return MovedAway
	case Restore:
		if hs.restoreHere(ctx, h) {
			return Running
		}
		fallthrough
	case Restart:
		hs.target.Pending(res, fmt.Sprintf("migration %s aborted; starting afresh", h.id))
		return StartAfresh
	}
	return NotHeld
}

// restoreHere restores the task from h's image on this node.
func (hs *Holds) restoreHere(ctx context.Context, h *Hold) bool {
	t := hs.target
	cp := t.Driver().Checkpoint
	if cp == nil {
		return false
	}
	deadline := time.Now().Add(restoreRetry)
	defer func() {
		if ctx.Err() == nil {
			// Restored, or started afresh: the image is of no more use
			// (when the agent is going away, the next one restores).
			os.RemoveAll(h.imageDir)
		}
	}()
	for {
		handle, err := cp.RestoreTask(ctx, t.Config(), h.imageDir, false)
		if err == nil {
			t.Restored(handle, fmt.Sprintf("migration %s aborted; restored from its checkpoint", h.id))
			t.Log().Info("task restored here after an aborted migration", "migration", h.id, "pid", handle.PID)
			return true
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Log().Error("restore after an aborted migration failed; starting afresh", "migration", h.id, "err", err)
			return false
		}
		t.Log().Warn("restore after an aborted migration failed; retrying", "migration", h.id, "err", err)
		select {
		case <-ctx.Done():
			return false
		case <-time.After(200 * time.Millisecond):
		}
	}
}
