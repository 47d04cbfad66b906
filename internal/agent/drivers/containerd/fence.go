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

// fenceWatch enforces the fence until done is closed; it returns at once
// for a task without a lease file.
func fenceWatch(taskDir string, cfg logConfig, done <-chan struct{}) {
	if _, ok, _ := drivers.ReadLeaseFence(taskDir); !ok || cfg.CgroupRel == "" {
		return
	}
	group, err := cgroup.Open(cgroup.Version(cfg.CgroupVersion), cfg.CgroupRoot, cfg.CgroupRel)
	if err != nil {
		fmt.Fprintf(os.Stderr, "strata __containerd-log: cannot enforce the lease fence: %v\n", err)
		return
	}
	tick := time.NewTicker(fenceTick)
	defer tick.Stop()
	termSent := false
	for {
		// An unreadable file keeps the last fence: the agent rewrites it
		// atomically, so this is a transient error at worst.
		if f, ok, err := drivers.ReadLeaseFence(taskDir); err == nil && ok {
			now := drivers.BootClock()
			switch {
			case now >= f.KillAt:
				markFenced(taskDir, f)
				fmt.Fprintf(os.Stderr, "strata __containerd-log: lease fence reached (%s): killing the container\n", f.Why)
				group.Kill(time.Second)
				return
			case now >= f.StopAt && !termSent && exists(filepath.Join(taskDir, startedFile)):
				markFenced(taskDir, f)
				termSent = true
				fmt.Fprintf(os.Stderr, "strata __containerd-log: lease fence reached (%s): stopping the container\n", f.Why)
				if pids, err := group.Procs(); err == nil {
					for _, pid := range pids {
						syscall.Kill(pid, syscall.SIGTERM)
					}
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

func markFenced(taskDir string, f drivers.LeaseFence) {
	os.WriteFile(filepath.Join(taskDir, fencedFile), []byte(f.Why+"\n"), 0o644)
}

// fencedWhy reports whether the fence stopped the task, and why.
func fencedWhy(taskDir string) (string, bool) {
	data, err := os.ReadFile(filepath.Join(taskDir, fencedFile))
	if err != nil {
		return "", false
	}
	return string(data), true
}

// fenceBeforeStart says why a task must not start when its fence has
// already reached its stop time (the copy it protects against may run
// elsewhere); empty: start it.
func fenceBeforeStart(taskDir string) string {
	f, ok, err := drivers.ReadLeaseFence(taskDir)
	if err != nil || !ok || drivers.BootClock() < f.StopAt {
		return ""
	}
	return fmt.Sprintf("not started: the lease fence was reached before the task could start (%s)", f.Why)
}
