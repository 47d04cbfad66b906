package exec

import (
	"context"
	"fmt"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/cgroup"
	"github.com/strata-dev/strata/internal/agent/drivers"
)

// Resize changes a running task's CPU quota and memory limit in its
// cgroups (drivers.Resizer): the task, its shim and its pid stay. A new
// memory limit below what the task holds in anonymous and shared memory
// is refused; its scratch tmpfs keep the size they started with.
func (d *Driver) Resize(_ context.Context, task *drivers.TaskConfig, res api.Resources) error {
	e, err := d.lookup(task.ID)
	if err != nil {
		return err
	}
	d.resizing.Lock()
	defer d.resizing.Unlock()
	g := e.Data.group
	if err := drivers.CheckResize(task, res, e.Exited(), func() (int64, error) { return cgroup.MemoryInUse(g) }); err != nil {
		return err
	}
	if err := cgroup.SetCPUMemory(g, res.CPUMilli, res.MemoryBytes); err != nil {
		return fmt.Errorf("resize %s: %w", task.ID, err)
	}
	d.log.Info("task resized in place", "task", task.ID, "pid", e.Data.handle.PID,
		"cpu_milli", res.CPUMilli, "memory", res.MemoryBytes, "was_cpu_milli", task.Resources.CPUMilli, "was_memory", task.Resources.MemoryBytes)
	return nil
}
