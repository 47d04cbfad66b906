package drivers

import (
	"errors"
	"fmt"
	"time"

	"github.com/strata-dev/strata/api"
)

// ErrTaskNotFound is returned by a driver for a task id it does not know, or
// whose process could not be found again on RecoverTask.
var ErrTaskNotFound = errors.New("task not found")

// ErrWrongNode is wrapped by a start that no retry on this node can fix:
// the task's image is for another CPU architecture, or the node has no
// memory of a tier the task accepts. The agent fails the task at once,
// without its restart policy (docs/hardware.md).
var ErrWrongNode = errors.New("cannot run on this node")

// TaskConfig is everything a driver needs to start one task of an allocation.
type TaskConfig struct {
	ID      string // unique on the node: "<allocID>/<task>"
	AllocID string
	Name    string
	Task    *api.Task
	// Env is the task's environment: Task.Env plus the STRATA_* variables.
	Env     map[string]string
	TaskDir string // exists; logs and driver files live here

	Resources api.Resources
	CPUs      []int    // exclusive cores; empty when not pinned
	NUMANode  int      // -1 when not pinned
	GPUs      []string // GPU ids assigned to the allocation
	// Devices are the device nodes the allocation was given (its GPUs'
	// and other devices'), for drivers that allow devices by list
	// (containerd); DenyDevices are the node's other device nodes, for
	// drivers that deny them (exec: the devices cgroup). Paths on the
	// host; docs/devices.md.
	Devices     []string
	DenyDevices []string

	// SharedCPUs is the cpuset of a task that is not pinned: the node's
	// cores less those reserved by exclusive allocations when it starts
	// (the agent rewrites it as reservations change). Empty: the parent's.
	SharedCPUs []int
	// Mems is the task's cpuset.mems: the NUMA nodes of the memory tiers
	// it accepts; empty: the parent's (docs/hardware.md).
	Mems []int

	// Fenced: the task's group needs a lease fence (atMostOnce,
	// disconnect.stopAfter). The agent writes the fence into TaskDir
	// (LeaseFile) before the start; the driver's watcher enforces it, and
	// a missing lease file means stop (FenceWatch).
	Fenced bool

	// RootVeto, when set, says why the task may not run as root (uid 0,
	// gid 0, group 0) whatever the node allows: its namespace does not
	// allow root tasks (api.Allocation.AllowRootTasks). CheckRoot applies
	// it to the ids the driver resolved.
	RootVeto string

	LogMaxBytes int64 // size of one log file before it rotates
	LogMaxFiles int   // files kept per stream, the live one included

	// Progress, when set, hears what a start that takes a while is doing
	// ("pulling image R: 1/3 layers, 2.0MiB/7.1MiB"); the agent shows it
	// as the pending task's message. It must not block.
	Progress func(message string) `json:"-"`
}

// Cpuset is the cpuset the task's cgroup gets: its exclusive cores when
// pinned, else the shared pool (NUMANode is -1 then, so cpuset.mems stays
// the parent's).
func (c *TaskConfig) Cpuset() []int {
	if len(c.CPUs) > 0 {
		return c.CPUs
	}
	return c.SharedCPUs
}

// TaskHandle is what the agent persists about a started task so that a new
// agent process can re-attach to it. Drivers fill it; the agent never
// interprets the driver-specific fields.
type TaskHandle struct {
	ID        string    `json:"id"`
	Driver    string    `json:"driver"`
	TaskDir   string    `json:"taskDir"`
	ShimPID   int       `json:"shimPid,omitempty"`
	ShimStart uint64    `json:"shimStart,omitempty"` // /proc/<pid>/stat starttime, guards against pid reuse
	PID       int       `json:"pid,omitempty"`       // the task's own process
	InitPID   int       `json:"initPid,omitempty"`   // pid 1 of the task's pid namespace (exec driver)
	Cgroup    string    `json:"cgroup,omitempty"`    // cgroup path relative to the cgroup root
	Cgroups   []string  `json:"cgroups,omitempty"`   // absolute cgroup directories
	StartedAt time.Time `json:"startedAt"`
}

// ExitResult is how a task ended.
type ExitResult struct {
	ExitCode   int       `json:"exitCode"`
	Signal     int       `json:"signal,omitempty"`
	OOMKilled  bool      `json:"oomKilled,omitempty"`
	MemoryMax  int64     `json:"memoryMax,omitempty"` // the limit in force, for messages
	Err        string    `json:"err,omitempty"`       // the task could not be run or watched
	FinishedAt time.Time `json:"finishedAt"`
	// Fenced is set when the task was stopped because the agent's lease
	// lapsed (LeaseFence): not the task's failure, and never restarted.
	Fenced bool `json:"fenced,omitempty"`
}

// Successful reports whether the task ended on its own with exit code 0.
func (r *ExitResult) Successful() bool {
	return r.ExitCode == 0 && r.Signal == 0 && !r.OOMKilled && r.Err == ""
}

// Describe says in words how the task ended: "exit code 1",
// "OOM killed (memory limit 64MiB)", "killed by signal 9".
func (r *ExitResult) Describe() string {
	switch {
	case r.OOMKilled && r.MemoryMax > 0:
		return fmt.Sprintf("OOM killed (memory limit %s)", FormatBytes(r.MemoryMax))
	case r.OOMKilled:
		return "OOM killed"
	case r.Err != "":
		return r.Err
	case r.Signal != 0:
		return fmt.Sprintf("killed by signal %d", r.Signal)
	}
	return fmt.Sprintf("exit code %d", r.ExitCode)
}

// FormatBytes renders n in the largest binary unit that divides it, e.g.
// 64MiB, 1536KiB, 100B.
func FormatBytes(n int64) string {
	for _, u := range []struct {
		suffix string
		size   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return fmt.Sprintf("%d%s", n/u.size, u.suffix)
		}
	}
	return fmt.Sprintf("%dB", n)
}
