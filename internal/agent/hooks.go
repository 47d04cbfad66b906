package agent

import (
	"context"
	"errors"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/drivers"
)

// A task's life is a sequence of points where concerns plug in, as
// Nomad's task-runner hooks do. A new concern is a new hook in
// taskHooksFor, not a new field on the runner:
//
//	            ┌──────────────────────────────────────────────────────────┐
//	            ▼                                                          │
//	prestart hooks ─► driver.StartTask ─► poststart hooks ─► driver.WaitTask
//	(refuse, fence,        │ (re-attach and restore    │                   │
//	 devices, cores,       │  reach poststart too)     ▼                   │
//	 resources)            │                       exited hooks ──claimed──┤
//	                       │                       (migration hold)        │
//	                       │                           │ not claimed       │
//	                       ▼                           ▼                   │
//	                   start failed ─────────────► restart policy ─backoff─┘
//
//	update hooks: the server's copy of the allocation changed (resize)
//	stop hooks:   the task is told to stop for good (a migration's hold)
//
// Hooks run on the task runner's goroutine unless said otherwise, in the
// order taskHooksFor lists them; a hook holds its own state and never the
// runner's lock.

// prestartHook runs before every start of the task: the first and each
// restart (not a re-attach after an agent restart, not a restore from a
// checkpoint: the task runs already). It contributes to the start's
// configuration through cfg, a copy made for this start, and may block
// (until the node's lease is usable) but returns when ctx is done or the
// task is told to stop (stop is closed), with errNotStarting. Any other
// error fails this start, and the restart policy decides; an error
// wrapping drivers.ErrWrongNode fails the task for good. It must be
// idempotent: it runs again before every restart.
type prestartHook interface {
	prestart(ctx context.Context, cfg *drivers.TaskConfig, stop <-chan struct{}) error
}

// errNotStarting is a prestart hook's answer when the task must not start
// because the agent is stopping or the task was told to stop.
var errNotStarting = errors.New("not starting: the task is stopping")

// poststartHook runs once the task runs: after a start, a re-attach or a
// restore, with the task's handle. It must not block and cannot fail the
// task; what it learns it puts in the task's state (st).
type poststartHook interface {
	poststart(h *drivers.TaskHandle, st *api.TaskState)
}

// exitVerdict is what an exited hook decided about an exit it claimed.
type exitVerdict int

const (
	// exitNotClaimed: the hook leaves the exit to the restart policy.
	exitNotClaimed exitVerdict = iota
	// exitStartAfresh: start the task again now, without a backoff.
	exitStartAfresh
	// exitRunning: the task runs again here (restored): wait for it.
	exitRunning
	// exitGone: the task runs elsewhere now: the runner ends without a
	// word to the server (the allocation is not this node's).
	exitGone
	// exitStopped: the task was told to stop while the hook held it.
	exitStopped
	// exitAgentStopping: the agent is going away; the next one settles
	// the exit.
	exitAgentStopping
)

// exitedHook runs when the task's process ended on its own or by a
// driver's doing the runner did not ask for (a stop the runner asked for
// goes to the restart policy directly). It may claim the exit: a
// migration's hold waits for the migration's verdict, which may block
// until ctx is done or stop is closed. The first hook that claims the
// exit decides; the others are not asked. It must not claim an exit that
// is not of its making.
type exitedHook interface {
	exited(ctx context.Context, res *drivers.ExitResult, stop <-chan struct{}) exitVerdict
}

// updateHook runs when the server's copy of the allocation changed
// (reconcile), on reconcile's goroutine: it must not block, and starts
// work that takes a while on a goroutine the agent tracks. It is
// idempotent: the same copy may come again.
type updateHook interface {
	update(alloc *api.Allocation)
}

// stopHook runs once when the task is told to stop for good, before the
// runner asks its driver to stop it, on the goroutine that told it: it
// must not block. It is not run when the agent itself stops (the tasks
// run on).
type stopHook interface {
	stop()
}

// taskHooks are a task runner's hooks, by point of its life, in order.
type taskHooks struct {
	prestart  []prestartHook
	poststart []poststartHook
	exited    []exitedHook
	update    []updateHook
	stop      []stopHook
}

// add files h under every point of the life it plugs in at.
func (hs *taskHooks) add(h any) {
	plugged := false
	if p, ok := h.(prestartHook); ok {
		hs.prestart, plugged = append(hs.prestart, p), true
	}
	if p, ok := h.(poststartHook); ok {
		hs.poststart, plugged = append(hs.poststart, p), true
	}
	if p, ok := h.(exitedHook); ok {
		hs.exited, plugged = append(hs.exited, p), true
	}
	if p, ok := h.(updateHook); ok {
		hs.update, plugged = append(hs.update, p), true
	}
	if p, ok := h.(stopHook); ok {
		hs.stop, plugged = append(hs.stop, p), true
	}
	if !plugged {
		panic("agent: a task hook that plugs in nowhere")
	}
}

// taskHooksFor wires a task's hooks, in the order they run, with the
// reason each is there.
func (a *Agent) taskHooksFor(ar *allocRunner, tr *taskRunner, alloc *api.Allocation, task *api.Task, perTaskDevices []string) taskHooks {
	var hs taskHooks
	// A task that cannot run on this node (no memory of a tier it takes)
	// fails for good before anything waits.
	if _, err := taskMems(a.node.NUMA, alloc.Assignment, task); err != nil {
		hs.add(refuseHook{err: err})
	}
	// Fenced groups start only under a usable lease, with the fence
	// written for the shim (at most once).
	if _, fenced := a.lease.fence(alloc.TaskGroup); fenced {
		hs.add(&fenceHook{keeper: a.lease, group: alloc.TaskGroup})
	}
	// A device that disappeared must not be passed as if it were there.
	if len(perTaskDevices) > 0 {
		hs.add(devicesHook{nodes: a.devNodes, ids: perTaskDevices})
	}
	// A shared task takes the pool of cores exclusive allocations leave.
	hs.add(sharedCoresHook{agent: a})
	// A restart starts with the resources a resize gave the running task.
	// The resize itself follows the server's copy (update).
	tr.resize = &resizeHook{agent: a, tr: tr}
	hs.add(tr.resize)
	// The report says who the task runs as (what a move can dump).
	hs.add(runsAsHook{procRoot: tr.procRoot})
	// A migration holds the task's exit while it decides where it runs.
	hs.add(holdHook{&tr.holds})
	return hs
}
