package containerd

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/strata-dev/strata/internal/agent/cgroup"
	"github.com/strata-dev/strata/internal/agent/drivers"
)

// A fenced task (a group with atMostOnce) must stop when the node's lease
// lapses even while the agent is frozen, killed or cut off. The agent
// writes the fence into the task directory (drivers.LeaseFile); the exec
// driver's shim enforces it. A container's shim is containerd's, so the
// process that outlives the agent here is the log process (LogMain): it
// watches the fence and signals every process of the container's cgroup,
// SIGTERM at StopAt and SIGKILL at KillAt, and leaves fencedFile behind so
// that the driver reports the exit as fenced.

// fencedFile, in the task directory, says the fence stopped the task.
const fencedFile = "containerd-fenced"

// startedFile, in the task directory, says the container's process runs:
// the driver writes it once containerd started the task. Before that the
// container's pid 1 is runc's init, or the command before it installed its
// handlers, and the kernel drops a SIGTERM to a namespace's init that has
// none; so SIGTERM waits for it, while SIGKILL at KillAt does not.
const startedFile = "containerd-started"

// fenceWatch enforces the fence until done is closed, as the exec shim
// does (drivers.WatchFence): SIGTERM to every process of the container's
// cgroup once it runs (startedFile), SIGKILL of the cgroup; fencedFile
// tells the driver.
func fenceWatch(taskDir string, cfg logConfig, done <-chan struct{}) {
	if cfg.CgroupRel == "" {
		return
	}
	if _, ok, _ := drivers.ReadLeaseFence(taskDir); !ok && !cfg.Fenced {
		return
	}
	group, err := cgroup.Open(cgroup.Version(cfg.CgroupVersion), cfg.CgroupRoot, cfg.CgroupRel)
	if err != nil {
		fmt.Fprintf(os.Stderr, "strata __containerd-log: cannot enforce the lease fence: %v\n", err)
		return
	}
	started := func() bool { return exists(filepath.Join(taskDir, startedFile)) }
	drivers.WatchFence(taskDir, cfg.Fenced, started, nil, done, func(step drivers.FenceStep, why string) {
		markFenced(taskDir, why)
		if step == drivers.FenceTerm {
			fmt.Fprintf(os.Stderr, "strata __containerd-log: lease fence reached (%s): stopping the container\n", why)
			if pids, err := group.Procs(); err == nil {
				for _, pid := range pids {
					syscall.Kill(pid, syscall.SIGTERM)
				}
			}
			return
		}
		fmt.Fprintf(os.Stderr, "strata __containerd-log: lease fence reached (%s): killing the container\n", why)
		group.Kill(time.Second)
	})
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func markFenced(taskDir, why string) {
	os.WriteFile(filepath.Join(taskDir, fencedFile), []byte(why+"\n"), 0o644)
}

// fencedWhy reports whether the fence stopped the task, and why.
func fencedWhy(taskDir string) (string, bool) {
	data, err := os.ReadFile(filepath.Join(taskDir, fencedFile))
	if err != nil {
		return "", false
	}
	return string(data), true
}
