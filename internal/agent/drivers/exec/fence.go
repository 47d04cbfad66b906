package exec

import (
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/strata-dev/strata/internal/agent/cgroup"
	"github.com/strata-dev/strata/internal/agent/drivers"
)

// fenceWatch enforces the task's lease fence (drivers.LeaseFile) from the
// shim, so that it holds when the agent is frozen (SIGSTOP), killed, cut
// off, or lost its data dir (drivers.WatchFence): SIGTERM to the process
// group of pid (the init of the task's namespaces, which forwards it to
// every process there), SIGKILL to the group and the cgroup. It watches
// from the moment the init is forked, since the init and the task stage
// take a while to set up before the command runs (running is closed once
// it runs, or the init ended). fenced (spec.Fenced) says the task has a
// fence. fencedOut reports whether it signalled the task.
func fenceWatch(taskDir string, fenced bool, pid int, group cgroup.Group, running, done <-chan struct{}, fencedOut *atomic.Bool) {
	drivers.WatchFence(taskDir, fenced, drivers.IsClosed(running), running, done, func(step drivers.FenceStep, why string) {
		fencedOut.Store(true)
		if step == drivers.FenceTerm {
			fmt.Fprintf(os.Stderr, "strata shim: lease fence reached (%s): stopping the task\n", why)
			syscall.Kill(-pid, syscall.SIGTERM)
			return
		}
		fmt.Fprintf(os.Stderr, "strata shim: lease fence reached (%s): killing the task\n", why)
		syscall.Kill(-pid, syscall.SIGKILL)
		if group != nil {
			group.Kill(time.Second)
		}
	})
}
