package nodesim

import (
	"context"
	"fmt"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/drivers"
)

// simAlloc is one allocation a simulated node runs. Its fields are guarded
// by the node's mu.
type simAlloc struct {
	alloc           *api.Allocation
	tasks           []*simTask
	stopped         bool // the server said stop and the tasks were stopped
	reportedRunning bool
}

type simTask struct {
	id    string // driver task id: "<allocID>/<task>"
	name  string
	state api.TaskState
}

// reconcile starts, stops and forgets allocations to match the server's
// list, and returns those whose status changed. Every task runs on the mock
// driver, whatever driver it names: nodesim runs nothing real.
func (n *simNode) reconcile(ctx context.Context, allocs []*api.Allocation) []*simAlloc {
	n.mu.Lock()
	defer n.mu.Unlock()
	var changed []*simAlloc
	seen := make(map[string]bool, len(allocs))
	for _, alloc := range allocs {
		seen[alloc.ID] = true
		if a, ok := n.allocs[alloc.ID]; ok {
			a.alloc = alloc
			if alloc.DesiredStatus == api.DesiredStop && !a.stopped {
				n.stopLocked(a)
				changed = append(changed, a)
			}
			continue
		}
		if alloc.DesiredStatus != api.DesiredRun || alloc.Terminal() {
			continue
		}
		a := n.startLocked(ctx, alloc)
		n.allocs[alloc.ID] = a
		changed = append(changed, a)
	}
	for id, a := range n.allocs {
		if !seen[id] {
			n.stopLocked(a)
			delete(n.allocs, id)
		}
	}
	return changed
}

func (n *simNode) startLocked(ctx context.Context, alloc *api.Allocation) *simAlloc {
	a := &simAlloc{alloc: alloc}
	n.sim.stats.started.Add(1)
	if alloc.TaskGroup == nil {
		return a
	}
	for _, t := range alloc.TaskGroup.Tasks {
		task := &simTask{id: alloc.ID + "/" + t.Name, name: t.Name}
		a.tasks = append(a.tasks, task)
		cfg := &drivers.TaskConfig{ID: task.id, AllocID: alloc.ID, Name: t.Name, Task: t, Env: t.Env,
			Resources: t.Resources, CPUs: alloc.Assignment.CPUs, NUMANode: alloc.Assignment.NUMANode, GPUs: alloc.Assignment.GPUs}
		if _, err := n.sim.driver.StartTask(ctx, cfg); err != nil {
			task.state = api.TaskState{State: api.TaskDead, Failed: true, ExitCode: -1, Message: err.Error(), FinishedAt: time.Now()}
			continue
		}
		task.state = api.TaskState{State: api.TaskRunning, StartedAt: time.Now()}
		if t.Env["MOCK_RUN_FOR"] != "" {
			// Only a task that ends by itself needs a waiter: the others
			// end when the server stops them.
			go n.waitTask(ctx, a, task)
		}
	}
	return a
}

// waitTask reports a task that ended by itself.
func (n *simNode) waitTask(ctx context.Context, a *simAlloc, task *simTask) {
	res, err := n.sim.driver.WaitTask(ctx, task.id)
	if err != nil {
		return // shutting down, or stopped and destroyed meanwhile
	}
	n.mu.Lock()
	if task.state.State == api.TaskDead {
		n.mu.Unlock()
		return // stopped by the server first
	}
	task.state.State, task.state.ExitCode, task.state.FinishedAt = api.TaskDead, res.ExitCode, res.FinishedAt
	task.state.Signal, task.state.OOMKilled = res.Signal, res.OOMKilled
	if res.ExitCode != 0 || res.OOMKilled {
		task.state.Failed = true
		task.state.Message = fmt.Sprintf("exited with code %d", res.ExitCode)
	}
	n.sim.driver.DestroyTask(task.id)
	n.mu.Unlock()
	n.report(ctx, []*simAlloc{a})
}

func (n *simNode) stopLocked(a *simAlloc) {
	a.stopped = true
	for _, t := range a.tasks {
		if t.state.State == api.TaskDead {
			continue
		}
		n.sim.driver.StopTask(t.id, 0)
		n.sim.driver.DestroyTask(t.id)
		t.state.State, t.state.FinishedAt = api.TaskDead, time.Now()
	}
}

// updateLocked is the allocation's report, derived from its tasks as the
// agent derives it.
func (a *simAlloc) updateLocked() *api.AllocUpdate {
	u := &api.AllocUpdate{ID: a.alloc.ID, TaskStates: make(map[string]*api.TaskState, len(a.tasks))}
	allDead, anyStarted := true, false
	for _, t := range a.tasks {
		st := t.state
		u.TaskStates[t.name] = &st
		if st.State != api.TaskDead {
			allDead = false
		}
		if !st.StartedAt.IsZero() {
			anyStarted = true
		}
		if st.State == api.TaskDead && st.Failed && u.ClientReason == "" {
			u.ClientReason = "task " + t.name + ": " + st.Message
		}
	}
	switch {
	case u.ClientReason != "":
		u.ClientStatus = api.AllocFailed
	case allDead:
		u.ClientStatus = api.AllocComplete
	case anyStarted:
		u.ClientStatus = api.AllocRunning
	default:
		u.ClientStatus = api.AllocPending
	}
	return u
}
