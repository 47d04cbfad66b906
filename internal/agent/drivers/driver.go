package drivers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/strata-dev/strata/api"
)

// Driver runs tasks of one kind. Implementations must be safe for
// concurrent use. Every method may block unless it says otherwise.
type Driver interface {
	// StartTask starts a task and returns once it runs (or already
	// ended). An error wrapping ErrWrongNode fails the task for good.
	StartTask(ctx context.Context, cfg *TaskConfig) (*TaskHandle, error)
	// RecoverTask re-attaches to a task started by an earlier agent
	// process; it wraps ErrTaskNotFound when that is impossible. It does
	// not block on the task.
	RecoverTask(h *TaskHandle) error
	// WaitTask blocks until the task ends, ctx is done, or the driver
	// closes (ErrClosed).
	WaitTask(ctx context.Context, id string) (*ExitResult, error)
	// StopTask asks the task to stop, kills it after timeout, and returns
	// once it has ended. Stopping an ended task is not an error.
	StopTask(id string, timeout time.Duration) error
	// DestroyTask releases what the task held (cgroups, a container); it
	// must be called after the task ended. The task directory stays.
	DestroyTask(id string) error
}

// The optional capabilities of a driver. The registry (Set) finds them
// once, when it loads the driver, and the agent asks the registry, never
// the driver value, whether a driver has one.

// Closer is a driver with resources to release when the agent stops
// (connections, watchers): Close ends every goroutine the driver started
// (Table.Close) and returns once they ended. The tasks keep running.
type Closer interface {
	Close() error
}

// Runner is a driver with background work of its own (containerd's image
// collector): Run does it until ctx is done and then returns. The agent
// runs it from its own Run, so New starts nothing.
type Runner interface {
	Run(ctx context.Context)
}

// Labeler is a driver that describes the node: its labels are advertised
// with the node's own (the micro-VM driver's accelerator). Labels must not
// block and returns the same labels for the driver's life.
type Labeler interface {
	Labels() map[string]string
}

// Checkpointer is a driver that can checkpoint and restore its tasks (exec
// and containerd, with criu).
type Checkpointer interface {
	// CanCheckpoint reports whether the driver has a working criu. It does
	// not block.
	CanCheckpoint() bool
	// KeepsMemory reports whether the driver's tasks can be dumped as it
	// starts them here, so that a move keeps their memory. It does not
	// block.
	KeepsMemory() bool
	// CheckpointTask dumps the task into dir; without leaveRunning the
	// task ends once the image is complete (the runner must expect that
	// exit). On failure the task runs on.
	CheckpointTask(ctx context.Context, id, dir string, leaveRunning bool) (*Checkpoint, error)
	// RestoreTask runs the task cfg from the image in dir; with
	// leaveStopped its processes wait for ResumeTask.
	RestoreTask(ctx context.Context, cfg *TaskConfig, dir string, leaveStopped bool) (*TaskHandle, error)
	// ResumeTask lets a task restored stopped run.
	ResumeTask(id string) error
}

// ErrResizeUnsupported is wrapped by Resize for a change the driver cannot
// make in place (a resource other than CPU and memory, exclusive cores):
// the task must be replaced to get it.
var ErrResizeUnsupported = errors.New("cannot be resized in place")

// ErrResizeBelowUsage is wrapped by Resize when a new memory limit is
// below what the task uses now: the kernel would reclaim and then kill it.
// The task keeps its limits.
var ErrResizeBelowUsage = errors.New("memory limit below the task's current usage")

// Resizer is a driver that changes a running task's resources in place:
// the same process (same PID), new limits. The autoscaler's vertical moves
// use it.
//
// Resize(ctx, task, res) contract:
//   - task is the running task's configuration as the driver started it
//     (its ID, its Resources now, its pinned CPUs); res is what it gets.
//   - It sets the task's CPU (CPUMilli: its quota) and memory
//     (MemoryBytes: its limit, swap kept off) to res and returns once the
//     kernel has them; the task is never stopped or restarted.
//   - Any other resource of res must equal task.Resources, and a task
//     with exclusive cores keeps its CPU: another change is refused with
//     ErrResizeUnsupported and changes nothing (ResizeProblem says why).
//   - A memory limit below what the task cannot give back now (anonymous
//     and shared memory) is refused with ErrResizeBelowUsage and changes
//     nothing: a limit never kills.
//   - It is idempotent: resizing to the current resources succeeds. It
//     may run while the task runs; the caller serializes Resizes of one
//     task and, on success, updates task.Resources (a restart then starts
//     with them).
//   - A task the driver does not know, or that ended, wraps
//     ErrTaskNotFound.
type Resizer interface {
	Resize(ctx context.Context, task *TaskConfig, res api.Resources) error
}

// CheckResize applies Resize's refusals, the same in every driver: a task
// that ended (ErrTaskNotFound), a change ResizeProblem names
// (ErrResizeUnsupported), a memory limit cut below what the task holds
// (ErrResizeBelowUsage; inUse reads it, only for a cut).
func CheckResize(cfg *TaskConfig, res api.Resources, exited bool, inUse func() (int64, error)) error {
	if exited {
		return fmt.Errorf("resize %s: the task has ended: %w", cfg.ID, ErrTaskNotFound)
	}
	if why := ResizeProblem(cfg, res); why != "" {
		return fmt.Errorf("resize %s: %s: %w", cfg.ID, why, ErrResizeUnsupported)
	}
	if res.MemoryBytes > 0 && (cfg.Resources.MemoryBytes == 0 || res.MemoryBytes < cfg.Resources.MemoryBytes) && inUse != nil {
		held, err := inUse()
		if err != nil {
			return fmt.Errorf("resize %s: %w", cfg.ID, err)
		}
		if held > res.MemoryBytes {
			return fmt.Errorf("resize %s: the task holds %s, more than %s: %w", cfg.ID,
				FormatBytes(held), FormatBytes(res.MemoryBytes), ErrResizeBelowUsage)
		}
	}
	return nil
}

// ResizeProblem says why a task of cfg cannot be resized in place to res
// (ErrResizeUnsupported's reason); "" when it can.
func ResizeProblem(cfg *TaskConfig, res api.Resources) string {
	now := cfg.Resources
	if len(cfg.CPUs) > 0 && res.CPUMilli != now.CPUMilli {
		return fmt.Sprintf("the task holds exclusive cores %v: its CPU changes with a new placement", cfg.CPUs)
	}
	if res.CPUMilli < 0 || res.MemoryBytes < 0 {
		return "cpu and memory must not be negative"
	}
	now.CPUMilli, now.MemoryBytes = res.CPUMilli, res.MemoryBytes
	if now != res {
		return fmt.Sprintf("only cpu and memory change in place; %+v asks for more (the task has %+v)", res, cfg.Resources)
	}
	return ""
}

// Orphan is a task of a driver found on the host with no record of the
// agent (its data dir lost): its cgroup under the driver's parent, its
// shim, or both.
type Orphan struct {
	AllocID string
	Task    string // empty: an allocation cgroup with no task cgroup in it
	// Handle re-attaches to the task (RecoverTask) when ShimAlive: the
	// shim's pid and start time, the task's pid, cgroup and directory.
	Handle    TaskHandle
	ShimAlive bool
	PIDs      []int // the processes in its cgroup
}

// ID is the driver's task id, "<alloc>/<task>".
func (o *Orphan) ID() string { return o.AllocID + "/" + o.Task }

// OrphanFinder is a driver that finds its tasks on the host (the exec
// driver): host reconciliation after lost records (the agent's
// orphans.go).
type OrphanFinder interface {
	// FindOrphans lists the tasks of the driver on the host for which
	// known returns false. It does not change anything.
	FindOrphans(allocsDir string, known func(allocID, task string) bool) ([]Orphan, error)
	// StopOrphan ends one: SIGTERM, grace, SIGKILL, its cgroups removed.
	StopOrphan(o Orphan, grace time.Duration) error
}
