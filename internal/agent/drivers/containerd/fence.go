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

// fenceTick is how often the fence is read, as the exec shim does: well
// inside the 250 ms the agent leaves before its lease can end.
const fenceTick = 50 * time.Millisecond

// fencedFile, in the task directory, says the fence stopped the task.
const fencedFile = "containerd-fenced"

// startedFile, in the task directory, says the container's process runs:
// the driver writes it once containerd started the task. Before that the
// container's pid 1 is runc's init, or the command before it installed its
// handlers, and the kernel drops a SIGTERM to a namespace's init that has
// none; so SIGTERM waits for it, while SIGKILL at KillAt does not.
const startedFile = "containerd-started"

// fenceWatch enforces the fence until done is closed, as the exec shim
// does (drivers.FenceWatch decides; a missing lease file of a fenced task
// means stop); it returns at once for a task that is not fenced and has
// no lease file.
func fenceWatch(taskDir string, cfg logConfig, done <-chan struct{}) {
	if _, ok, _ := drivers.ReadLeaseFence(taskDir); (!ok && !cfg.Fenced) || cfg.CgroupRel == "" {
		return
	}
	group, err := cgroup.Open(cgroup.Version(cfg.CgroupVersion), cfg.CgroupRoot, cfg.CgroupRel)
	if err != nil {
		fmt.Fprintf(os.Stderr, "strata __containerd-log: cannot enforce the lease fence: %v\n", err)
		return
	}
	tick := time.NewTicker(fenceTick)
	defer tick.Stop()
	var w drivers.FenceWatch
	for {
		f, ok, err := drivers.ReadLeaseFence(taskDir)
		started := exists(filepath.Join(taskDir, startedFile))
		switch step, why := w.Observe(f, ok, err, drivers.BootClock(), started); step {
		case drivers.FenceKill:
			markFenced(taskDir, why)
			fmt.Fprintf(os.Stderr, "strata __containerd-log: lease fence reached (%s): killing the container\n", why)
			group.Kill(time.Second)
			return
		case drivers.FenceTerm:
			markFenced(taskDir, why)
			fmt.Fprintf(os.Stderr, "strata __containerd-log: lease fence reached (%s): stopping the container\n", why)
			if pids, err := group.Procs(); err == nil {
				for _, pid := range pids {
					syscall.Kill(pid, syscall.SIGTERM)
				}
			}
		}
		select {
		case <-done:
			return
		case <-tick.C:
		}
	}
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
