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
	if e.Exited() {
		return fmt.Errorf("resize %s: the task has ended: %w", task.ID, drivers.ErrTaskNotFound)
	}
	if why := drivers.ResizeProblem(task, res); why != "" {
		return fmt.Errorf("resize %s: %s: %w", task.ID, why, drivers.ErrResizeUnsupported)
	}
	d.resizing.Lock()
	defer d.resizing.Unlock()
	g := e.Data.group
	if res.MemoryBytes > 0 && (task.Resources.MemoryBytes == 0 || res.MemoryBytes < task.Resources.MemoryBytes) {
		inUse, err := cgroup.MemoryInUse(g)
		if err != nil {
			return fmt.Errorf("resize %s: %w", task.ID, err)
		}
		if inUse > res.MemoryBytes {
			return fmt.Errorf("resize %s: the task holds %s, more than %s: %w", task.ID,
				drivers.FormatBytes(inUse), drivers.FormatBytes(res.MemoryBytes), drivers.ErrResizeBelowUsage)
		}
	}
	if err := cgroup.SetCPUMemory(g, res.CPUMilli, res.MemoryBytes); err != nil {
		return fmt.Errorf("resize %s: %w", task.ID, err)
	}
	d.log.Info("task resized in place", "task", task.ID, "pid", e.Data.handle.PID,
		"cpu_milli", res.CPUMilli, "memory", res.MemoryBytes, "was_cpu_milli", task.Resources.CPUMilli, "was_memory", task.Resources.MemoryBytes)
	return nil
}
