package agent

import (
	"fmt"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/drivers"
	"github.com/strata-dev/strata/internal/agent/drivers/exec"
	"github.com/strata-dev/strata/internal/agent/health"
)

// newHealth builds the allocation's health runner: its checks run while
// their tasks run, a change marks the allocation for the next report,
// and a failed liveness check restarts its task.
func (ar *allocRunner) newHealth() {
	alloc := ar.allocation()
	// An exec check runs as its task's user, never with more rights.
	info := func(task string) health.TaskInfo {
		tr := ar.task(task)
		if tr == nil {
			return health.TaskInfo{IdentityErr: "no task " + task}
		}
		ti := health.TaskInfo{Env: tr.cfg.Env, Dir: tr.cfg.TaskDir}
		uid, gid, err := exec.ResolveUser(tr.cfg.Task.User)
		if err == nil {
			// The task's root policy holds for its checks too (a check of a
			// container runs on the host).
			err = drivers.CheckRoot(fmt.Sprintf("check user %q", tr.cfg.Task.User), uid, gid, nil, ar.agent.cfg.AllowRootTasks, tr.cfg.RootVeto)
		}
		if err != nil {
			ti.IdentityErr = err.Error()
		} else {
			ti.Identity = &health.Identity{UID: uid, GID: gid}
		}
		return ti
	}
	prober := ar.agent.cfg.HealthProber
	if prober == nil {
		prober = health.NetProber{}
	}
	set := health.NewSet(alloc, info)
	ar.started = map[string]time.Time{}
	ar.health = health.NewRunner(set, prober, health.SystemClock{},
		func() { ar.agent.markDirty(ar.id()) },
		func(task, reason string) {
			if tr := ar.task(task); tr != nil {
				ar.log.Warn("liveness check failed; restarting the task", "task", task, "reason", reason)
				tr.restartUnhealthy(reason)
			}
		})
}

// startHealth starts the check loop and tells it about tasks that already
// run (re-attached after an agent restart).
func (ar *allocRunner) startHealth() {
	for _, tr := range ar.tasks {
		ar.followTask(tr.cfg.Name, tr.snapshot())
	}
	ar.agent.wg.Add(1)
	go func() {
		defer ar.agent.wg.Done()
		ar.health.Run(ar.agent.ctx)
	}()
}

// followTask tells the health runner that a task started (a new
// StartedAt while running) or stopped running.
func (ar *allocRunner) followTask(name string, st api.TaskState) {
	ar.mu.Lock()
	last, was := ar.started[name]
	running := st.State == api.TaskRunning
	switch {
	case running && (!was || !last.Equal(st.StartedAt)):
		ar.started[name] = st.StartedAt
	case !running && was:
		delete(ar.started, name)
	default:
		ar.mu.Unlock()
		return
	}
	ar.mu.Unlock()
	if running {
		ar.health.TaskStarted(name)
	} else {
		ar.health.TaskStopped(name)
	}
}
