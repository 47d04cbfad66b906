package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/drivers"
	"github.com/strata-dev/strata/internal/agent/migrate"
	"github.com/strata-dev/strata/internal/agent/state"
)

// defaultKillTimeout is the SIGTERM grace when a task sets none.
const defaultKillTimeout = 5 * time.Second

// taskRunner runs one task of an allocation through its driver: start,
// wait, restart per policy, stop. Its state is guarded by mu; it tells its
// allocation runner about every change through changed. What concerns
// other than the life itself (the lease, devices, cores, resizes,
// migrations) do around it are its hooks (hooks.go).
type taskRunner struct {
	// cfg is the task's configuration as taskConfigFor made it, never
	// changed after: prestart hooks complete a copy of it for each start.
	cfg    drivers.TaskConfig
	driver Driver
	// caps is the driver with its capabilities, from the node's registry.
	caps   *drivers.Loaded
	policy api.RestartPolicy
	log    *slog.Logger
	// changed persists and reports; it is called without mu held.
	changed func(*taskRunner)
	hooks   taskHooks
	// holds is the migration hold of the task (migrate.Holds), one of its
	// hooks (holdHook).
	holds migrate.Holds
	// procRoot is where the task's process is read (runsAs): /proc.
	procRoot string
	// oomKilled, when set, is told of every exit the kernel's OOM killer
	// caused (the agent's metrics count them).
	oomKilled func()
	// resize is the task's resize hook: the resources in force.
	resize *resizeHook

	stopOnce sync.Once
	stopCh   chan struct{} // closed by stop
	doneCh   chan struct{} // closed when run returns
	// unhealthyCh carries a failed liveness check's reason: the running
	// task is killed and its restart policy decides what follows.
	unhealthyCh chan string

	mu     sync.Mutex
	state  api.TaskState
	handle *drivers.TaskHandle
}

func newTaskRunner(cfg drivers.TaskConfig, drv *drivers.Loaded, policy api.RestartPolicy, log *slog.Logger, rec *state.TaskRecord) *taskRunner {
	tr := &taskRunner{
		cfg: cfg, driver: drv.Driver, caps: drv, policy: policy,
		log:         log.With("task", cfg.Name),
		stopCh:      make(chan struct{}),
		doneCh:      make(chan struct{}),
		unhealthyCh: make(chan string, 1),
		state:       api.TaskState{State: api.TaskPending},
	}
	tr.holds.SetTarget(migTask{tr})
	if rec != nil {
		tr.state, tr.handle = rec.State, rec.Handle
	}
	// A slow start (an image pull) shows what it is doing as the pending
	// task's message.
	tr.cfg.Progress = func(msg string) {
		tr.update(func(s *api.TaskState) {
			if s.State == api.TaskPending {
				s.Message = msg
			}
		})
	}
	return tr
}

// record is the task's persisted form.
func (tr *taskRunner) record() *state.TaskRecord {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	rec := &state.TaskRecord{State: tr.state}
	if tr.handle != nil {
		h := *tr.handle
		rec.Handle = &h
	}
	return rec
}

func (tr *taskRunner) snapshot() api.TaskState {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.state
}

// dead reports whether the task ended for good.
func (tr *taskRunner) dead() bool { return tr.snapshot().State == api.TaskDead }

func (tr *taskRunner) update(fn func(*api.TaskState)) {
	tr.mu.Lock()
	fn(&tr.state)
	tr.mu.Unlock()
	tr.changed(tr)
}

// restartUnhealthy asks for the running task to be killed because a
// liveness check failed; the exit counts as a failure with that reason.
// It does not wait, and a request while one is pending is dropped.
func (tr *taskRunner) restartUnhealthy(reason string) {
	select {
	case tr.unhealthyCh <- reason:
	default:
	}
}

// stop asks the task to end for good; it does not wait (see doneCh). The
// stop hooks run first, once.
func (tr *taskRunner) stop() {
	tr.stopOnce.Do(func() {
		for _, h := range tr.hooks.stop {
			h.stop()
		}
		close(tr.stopCh)
	})
}

func (tr *taskRunner) stopping() bool {
	select {
	case <-tr.stopCh:
		return true
	default:
		return false
	}
}

// run drives the task until it is dead or ctx ends; when ctx ends first the
// task keeps running and a later agent re-attaches to it.
func (tr *taskRunner) run(ctx context.Context) {
	defer close(tr.doneCh)
	tr.mu.Lock()
	handle, st := tr.handle, tr.state
	tr.mu.Unlock()
	if st.State == api.TaskDead {
		return
	}
	if handle != nil {
		if err := tr.driver.RecoverTask(handle); err != nil {
			tr.log.Warn("task lost while the agent was down", "err", err)
			tr.mu.Lock()
			tr.handle = nil
			tr.mu.Unlock()
			res := &drivers.ExitResult{ExitCode: -1, Err: "task lost while the agent was down", FinishedAt: time.Now()}
			if !tr.afterExit(ctx, res, false) {
				return
			}
		} else {
			tr.running(handle, tr.snapshot().Message)
			if !tr.waitAndHandle(ctx) {
				return
			}
		}
	}
	for {
		if tr.stopping() {
			tr.markStopped(&drivers.ExitResult{FinishedAt: time.Now()})
			return
		}
		select { // a liveness failure of the previous run is settled
		case <-tr.unhealthyCh:
		default:
		}
		h, err := tr.start(ctx)
		if errors.Is(err, errNotStarting) {
			if tr.stopping() {
				tr.markStopped(&drivers.ExitResult{FinishedAt: time.Now()})
			}
			return
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			tr.log.Error("task start failed", "err", err)
			res := &drivers.ExitResult{ExitCode: -1, Err: fmt.Sprintf("start failed: %v", err), FinishedAt: time.Now()}
			if errors.Is(err, drivers.ErrWrongNode) {
				tr.update(func(s *api.TaskState) {
					setExit(s, res)
					s.State, s.Failed, s.Message = api.TaskDead, true, res.Describe()
				})
				return
			}
			if !tr.afterExit(ctx, res, false) {
				return
			}
			continue
		}
		tr.running(h)
		if !tr.waitAndHandle(ctx) {
			return
		}
	}
}

// start runs the prestart hooks on a copy of the task's configuration,
// made for this start, and starts the task with it.
func (tr *taskRunner) start(ctx context.Context) (*drivers.TaskHandle, error) {
	cfg := tr.cfg
	for _, h := range tr.hooks.prestart {
		if err := h.prestart(ctx, &cfg, tr.stopCh); err != nil {
			return nil, err
		}
	}
	return tr.driver.StartTask(ctx, &cfg)
}

// allocated is the task's resources in force (a resize changes them).
func (tr *taskRunner) allocated() api.Resources {
	if tr.resize != nil {
		return tr.resize.inForce()
	}
	return tr.cfg.Resources
}

// running records that the task runs under h (a start, a re-attach, a
// restore) and runs the poststart hooks; message is the state's message.
func (tr *taskRunner) running(h *drivers.TaskHandle, message ...string) {
	tr.mu.Lock()
	tr.handle = h
	tr.mu.Unlock()
	tr.update(func(s *api.TaskState) {
		s.State, s.PID = api.TaskRunning, h.PID
		if !h.StartedAt.IsZero() {
			s.StartedAt = h.StartedAt
		}
		s.FinishedAt, s.Message = time.Time{}, strings.Join(message, "")
		for _, hk := range tr.hooks.poststart {
			hk.poststart(h, s)
		}
	})
}

// waitAndHandle waits for the running task and applies the restart policy.
// It returns true when the task should be started again.
func (tr *taskRunner) waitAndHandle(ctx context.Context) bool {
	waitCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	type outcome struct {
		res *drivers.ExitResult
		err error
	}
	results := make(chan outcome, 1)
	go func() {
		res, err := tr.driver.WaitTask(waitCtx, tr.cfg.ID)
		results <- outcome{res, err}
	}()
	stopped := false
	unhealthy := ""
	var out outcome
	select {
	case <-ctx.Done():
		return false // the agent is going away; the task keeps running
	case out = <-results:
	case unhealthy = <-tr.unhealthyCh:
		timeout := tr.cfg.Task.KillTimeout
		if timeout <= 0 {
			timeout = defaultKillTimeout
		}
		if err := tr.driver.StopTask(tr.cfg.ID, timeout); err != nil {
			tr.log.Error("task stop failed", "err", err)
		}
		out = <-results
	case <-tr.stopCh:
		stopped = true
		timeout := tr.cfg.Task.KillTimeout
		if timeout <= 0 {
			timeout = defaultKillTimeout
		}
		if err := tr.driver.StopTask(tr.cfg.ID, timeout); err != nil {
			tr.log.Error("task stop failed", "err", err)
		}
		out = <-results
	}
	if out.err != nil {
		if ctx.Err() != nil {
			return false
		}
		out.res = &drivers.ExitResult{ExitCode: -1, Err: fmt.Sprintf("wait: %v", out.err), FinishedAt: time.Now()}
	}
	if unhealthy != "" && !tr.stopping() {
		res := *out.res
		res.Err = "killed: " + unhealthy
		out.res = &res
	}
	if err := tr.driver.DestroyTask(tr.cfg.ID); err != nil && !errors.Is(err, drivers.ErrTaskNotFound) {
		tr.log.Error("task cleanup failed", "err", err)
	}
	tr.mu.Lock()
	tr.handle = nil
	tr.mu.Unlock()
	if !stopped {
		for _, h := range tr.hooks.exited {
			switch h.exited(ctx, out.res, tr.stopCh) {
			case exitNotClaimed:
				continue
			case exitStartAfresh:
				return true
			case exitRunning:
				return tr.waitAndHandle(ctx)
			case exitStopped:
				tr.markStopped(out.res)
				return false
			case exitGone, exitAgentStopping:
				return false
			}
		}
	}
	return tr.afterExit(ctx, out.res, stopped)
}

// afterExit records how the task ended and, per policy, waits out the
// backoff. It returns true when the task should be started again.
func (tr *taskRunner) afterExit(ctx context.Context, res *drivers.ExitResult, stopped bool) bool {
	if res.OOMKilled && tr.oomKilled != nil {
		tr.oomKilled()
	}
	if stopped || tr.stopping() {
		tr.markStopped(res)
		return false
	}
	if res.Fenced {
		// The shim stopped it when the lease lapsed: the server replaces
		// it once the lease has surely expired; it never runs here again.
		tr.log.Warn("task fenced: the node's lease lapsed", "result", res.Describe())
		tr.update(func(s *api.TaskState) {
			setExit(s, res)
			s.State, s.Failed, s.Message = api.TaskDead, true, api.ReasonFenced+" ("+res.Describe()+")"
		})
		return false
	}
	restarts := tr.snapshot().Restarts
	d := decideRestart(tr.policy, res, restarts)
	tr.log.Info("task exited", "result", res.Describe(), "restarts", restarts, "restart", d.Restart, "delay", d.Delay)
	if !d.Restart {
		tr.update(func(s *api.TaskState) {
			setExit(s, res)
			s.State, s.Failed, s.Message = api.TaskDead, d.Failed, res.Describe()
		})
		return false
	}
	tr.update(func(s *api.TaskState) {
		setExit(s, res)
		s.State = api.TaskPending
		s.Restarts++
		s.Message = fmt.Sprintf("%s; restarting in %s", res.Describe(), d.Delay)
	})
	select {
	case <-ctx.Done():
		return false
	case <-tr.stopCh:
		tr.markStopped(res)
		return false
	case <-time.After(d.Delay):
		return true
	}
}

func (tr *taskRunner) markStopped(res *drivers.ExitResult) {
	tr.update(func(s *api.TaskState) {
		setExit(s, res)
		s.State, s.Failed, s.Message = api.TaskDead, false, "stopped"
	})
}

func setExit(s *api.TaskState, res *drivers.ExitResult) {
	s.PID = 0
	s.ExitCode, s.Signal, s.OOMKilled = res.ExitCode, res.Signal, res.OOMKilled
	s.FinishedAt = res.FinishedAt
	if s.FinishedAt.IsZero() {
		s.FinishedAt = time.Now()
	}
}
