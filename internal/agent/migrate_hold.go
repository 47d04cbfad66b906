package agent

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/drivers"
)

// holdVerdict is what becomes of a task whose exit a migration holds.
type holdVerdict int

const (
	// holdResume: no migration exit happened or it is over; an exit is
	// the task's own and the restart policy applies.
	holdResume holdVerdict = iota
	// holdGone: the task runs on the target now; this runner ends
	// without a word to the server (the allocation is not this node's).
	holdGone
	// holdRestore: the move was aborted; restore the task here from its
	// image.
	holdRestore
	// holdRestart: the move was aborted and the task cannot be restored;
	// start it afresh here.
	holdRestart
)

// migrationHold makes a task runner wait, instead of applying its restart
// policy, when its task ends during a migration: criu's dump kills it, or
// a fallback stops it. The migration decides what follows.
type migrationHold struct {
	id       string
	once     sync.Once
	decided  chan struct{}
	verdict  holdVerdict
	imageDir string
	// settled is closed once the runner acted on the verdict (for a
	// restore: the task runs again or could not be restored).
	settled chan struct{}
}

func (h *migrationHold) decide(v holdVerdict, imageDir string) {
	h.once.Do(func() {
		h.verdict, h.imageDir = v, imageDir
		close(h.decided)
	})
}

// migrationHolds is a task runner's migration hold: an exited hook that
// claims the task's exit while a migration holds it, and a stop hook that
// lets the hold go when the task is told to stop.
type migrationHolds struct {
	tr *taskRunner

	mu      sync.Mutex
	current *migrationHold
}

// hold installs a migration hold on the task.
func (hs *migrationHolds) hold(id string) *migrationHold {
	h := &migrationHold{id: id, decided: make(chan struct{}), settled: make(chan struct{})}
	hs.mu.Lock()
	hs.current = h
	hs.mu.Unlock()
	return h
}

// held is the hold in place, nil when none.
func (hs *migrationHolds) held() *migrationHold {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return hs.current
}

func (hs *migrationHolds) release(h *migrationHold) {
	hs.mu.Lock()
	if hs.current == h {
		hs.current = nil
	}
	hs.mu.Unlock()
}

// stop lets a hold go: a task told to stop is stopped, whatever the
// migration decides (its exited hook answers exitStopped).
func (hs *migrationHolds) stop() {}

// restoreRetry bounds how long a local restore retries: on one host the
// target may still hold the image's pids for a moment.
const restoreRetry = 10 * time.Second

// exited claims an exit that happened while a migration held the task,
// waits for the migration's verdict and acts on it.
func (hs *migrationHolds) exited(ctx context.Context, res *drivers.ExitResult, stop <-chan struct{}) exitVerdict {
	h := hs.held()
	if h == nil {
		return exitNotClaimed
	}
	tr := hs.tr
	// settled is closed once the verdict is acted on, not when the task
	// ends: a restored task runs on after this returns.
	var once sync.Once
	settle := func() { once.Do(func() { close(h.settled) }) }
	defer settle()
	select {
	case <-ctx.Done():
		return exitAgentStopping // the next agent settles it
	case <-stop:
		hs.release(h)
		return exitStopped
	case <-h.decided:
	}
	hs.release(h)
	switch h.verdict {
	case holdGone:
		tr.log.Info("task moved away", "migration", h.id)
		return exitGone
	case holdRestore:
		if hs.restoreHere(ctx, h) {
			return exitRunning
		}
		fallthrough
	case holdRestart:
		tr.update(func(s *api.TaskState) {
			setExit(s, res)
			s.State, s.Message = api.TaskPending, fmt.Sprintf("migration %s aborted; starting afresh", h.id)
		})
		return exitStartAfresh
	}
	return exitNotClaimed
}

// restoreHere restores the task from h's image on this node.
func (hs *migrationHolds) restoreHere(ctx context.Context, h *migrationHold) bool {
	tr := hs.tr
	cp := tr.caps.Checkpoint
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
		handle, err := cp.RestoreTask(ctx, &tr.cfg, h.imageDir, false)
		if err == nil {
			tr.running(handle, fmt.Sprintf("migration %s aborted; restored from its checkpoint", h.id))
			tr.log.Info("task restored here after an aborted migration", "migration", h.id, "pid", handle.PID)
			return true
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			tr.log.Error("restore after an aborted migration failed; starting afresh", "migration", h.id, "err", err)
			return false
		}
		tr.log.Warn("restore after an aborted migration failed; retrying", "migration", h.id, "err", err)
		if !sleepCtx(ctx, 200*time.Millisecond) {
			return false
		}
	}
}
