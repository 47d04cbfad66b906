package containerd

import (
	"context"
	"fmt"

	client "github.com/containerd/containerd/v2/client"
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/cgroup"
	"github.com/strata-dev/strata/internal/agent/drivers"
)

// Resize changes a running container's CPU quota and memory limit through
// containerd (runc update, which orders the v1 memory and memory+swap
// writes itself) (drivers.Resizer): the container and its processes stay.
// A memory limit below what the container holds in anonymous and shared
// memory is refused.
func (d *Driver) Resize(ctx context.Context, task *drivers.TaskConfig, res api.Resources) error {
	e, err := d.lookup(task.ID)
	if err != nil {
		return err
	}
	d.resizing.Lock()
	defer d.resizing.Unlock()
	t := e.Data
	var inUse func() (int64, error)
	if t.group != nil {
		inUse = func() (int64, error) { return cgroup.MemoryInUse(t.group) }
	}
	if err := drivers.CheckResize(task, res, e.Exited(), inUse); err != nil {
		return err
	}
	ct, err := d.loadTask(d.namespaced(ctx), t.containerID)
	if err != nil {
		return fmt.Errorf("resize %s: %w", task.ID, err)
	}
	if err := ct.Update(d.namespaced(ctx), client.WithResources(resizedResources(res, d.noSwap))); err != nil {
		return fmt.Errorf("resize %s: %w", task.ID, err)
	}
	t.memoryMax = res.MemoryBytes
	d.log.Info("container resized in place", "task", task.ID, "container", t.containerID, "pid", t.handle.PID,
		"cpu_milli", res.CPUMilli, "memory", res.MemoryBytes, "was_cpu_milli", task.Resources.CPUMilli, "was_memory", task.Resources.MemoryBytes)
	return nil
}

// resizedResources is the update runc applies: the CPU quota (-1: none)
// and the memory limit (-1: none), memory+swap at the limit where swap is
// accounted, as applyLimits starts a container.
func resizedResources(res api.Resources, noSwap bool) *specs.LinuxResources {
	quota := int64(-1)
	if res.CPUMilli > 0 {
		quota = max(res.CPUMilli*cfsPeriod/1000, 1000)
	}
	period := uint64(cfsPeriod)
	limit := int64(-1)
	if res.MemoryBytes > 0 {
		limit = res.MemoryBytes
	}
	mem := &specs.LinuxMemory{Limit: &limit}
	if noSwap {
		swap := limit
		mem.Swap = &swap
	}
	return &specs.LinuxResources{CPU: &specs.LinuxCPU{Quota: &quota, Period: &period}, Memory: mem}
}
