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

// hold installs a migration hold on the task; release removes it.
func (tr *taskRunner) hold(id string) *migrationHold {
	h := &migrationHold{id: id, decided: make(chan struct{}), settled: make(chan struct{})}
	tr.mu.Lock()
	tr.migration = h
	tr.mu.Unlock()
	return h
}

func (tr *taskRunner) currentHold() *migrationHold {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.migration
}

func (tr *taskRunner) release(h *migrationHold) {
	tr.mu.Lock()
	if tr.migration == h {
		tr.migration = nil
	}
	tr.mu.Unlock()
}

// restoreRetry bounds how long a local restore retries: on one host the
// target may still hold the image's pids for a moment.
const restoreRetry = 10 * time.Second

// awaitMigration waits for the migration's verdict on a task that ended
// while h was held, and acts on it. It returns true when the run loop
// should start the task afresh.
func (tr *taskRunner) awaitMigration(ctx context.Context, h *migrationHold, res *drivers.ExitResult) bool {
	// settled is closed once the verdict is acted on, not when the task
	// ends: a restored task runs on in waitAndHandle below.
	var once sync.Once
	settle := func() { once.Do(func() { close(h.settled) }) }
	defer settle()
	select {
	case <-ctx.Done():
		return false // the agent is going away; the next one settles it
	case <-tr.stopCh:
		tr.release(h)
		tr.markStopped(res)
		return false
	case <-h.decided:
	}
	tr.release(h)
	switch h.verdict {
	case holdGone:
		tr.log.Info("task moved away", "migration", h.id)
		return false
	case holdRestore:
		if tr.restoreHere(ctx, h) {
			settle()
			return tr.waitAndHandle(ctx)
		}
		fallthrough
	case holdRestart:
		tr.update(func(s *api.TaskState) {
			setExit(s, res)
			s.State, s.Message = api.TaskPending, fmt.Sprintf("migration %s aborted; starting afresh", h.id)
		})
		return true
	}
	return tr.afterExit(ctx, res, false)
}

// restoreHere restores the task from h's image on this node.
func (tr *taskRunner) restoreHere(ctx context.Context, h *migrationHold) bool {
	cp, ok := tr.driver.(Checkpointer)
	if !ok {
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
			tr.mu.Lock()
			tr.handle = handle
			tr.mu.Unlock()
			tr.update(func(s *api.TaskState) {
				s.State, s.PID, s.RunsAs = api.TaskRunning, handle.PID, runsAs(tr.procRoot, handle.PID)
				s.Message = fmt.Sprintf("migration %s aborted; restored from its checkpoint", h.id)
			})
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
