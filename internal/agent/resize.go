package agent

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/drivers"
)

// resizeTimeout bounds one resize of a running task.
const resizeTimeout = 30 * time.Second

// resizeHook keeps a task's resources in step with the server's copy of
// its allocation without restarting it. As an update hook it sees the
// task's resources change in the server's copy and, when the task runs
// and its driver resizes in place (drivers.Resizer), resizes it on a
// goroutine the agent tracks; a driver that cannot, or a resize refused
// (ErrResizeUnsupported, ErrResizeBelowUsage), leaves the running task as
// it is, logged, and the next start takes the new resources. As a
// prestart hook it gives every start the resources in force. Resizes of
// one task run one at a time, the latest wins.
type resizeHook struct {
	agent *Agent
	tr    *taskRunner

	run sync.Mutex // one resize at a time

	mu      sync.Mutex
	want    api.Resources // the server's latest for the task
	current api.Resources // what the running task has
	set     bool          // want and current are known
}

func (h *resizeHook) init() {
	if !h.set {
		h.want, h.current, h.set = h.tr.cfg.Resources, h.tr.cfg.Resources, true
	}
}

// inForce is what the task has now.
func (h *resizeHook) inForce() api.Resources {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.init()
	return h.current
}

func (h *resizeHook) prestart(_ context.Context, cfg *drivers.TaskConfig, _ <-chan struct{}) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.init()
	// A start takes the server's latest: the running task it replaces is
	// gone, and with it what was in force.
	h.current = h.want
	cfg.Resources = h.want
	return nil
}

func (h *resizeHook) update(alloc *api.Allocation) {
	var task *api.Task
	for _, t := range alloc.TaskGroup.Tasks {
		if t.Name == h.tr.cfg.Name {
			task = t
		}
	}
	if task == nil {
		return
	}
	h.mu.Lock()
	h.init()
	changed := task.Resources != h.want
	h.want = task.Resources
	h.mu.Unlock()
	if !changed {
		return
	}
	h.agent.wg.Add(1)
	go func() {
		defer h.agent.wg.Done()
		h.resize()
	}()
}

// resize brings the running task to the latest wanted resources.
func (h *resizeHook) resize() {
	h.run.Lock()
	defer h.run.Unlock()
	h.mu.Lock()
	want, current := h.want, h.current
	h.mu.Unlock()
	if want == current || h.tr.snapshot().State != api.TaskRunning {
		return // a later resize did it, or the next start takes it
	}
	log := h.tr.log.With("cpu_milli", want.CPUMilli, "memory", want.MemoryBytes)
	rz := h.tr.caps.Resize
	if rz == nil {
		log.Info("the task's resources changed; its driver cannot resize in place: its next start takes them", "driver", h.tr.caps.Name)
		return
	}
	cfg := drivers.TaskConfig{ID: h.tr.cfg.ID, AllocID: h.tr.cfg.AllocID, Name: h.tr.cfg.Name, Task: h.tr.cfg.Task,
		TaskDir: h.tr.cfg.TaskDir, CPUs: h.tr.cfg.CPUs, NUMANode: h.tr.cfg.NUMANode, Resources: current}
	ctx, cancel := context.WithTimeout(h.agent.ctx, resizeTimeout)
	defer cancel()
	err := rz.Resize(ctx, &cfg, want)
	switch {
	case err == nil:
		h.mu.Lock()
		h.current = want
		h.mu.Unlock()
		log.Info("task resized in place")
	case errors.Is(err, drivers.ErrResizeUnsupported), errors.Is(err, drivers.ErrResizeBelowUsage):
		log.Warn("task not resized in place: its next start takes the new resources", "err", err)
	default:
		log.Error("resize the task", "err", err)
	}
}
