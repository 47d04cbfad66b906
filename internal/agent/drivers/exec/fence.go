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

// fenceTick is how often the shim looks at a fenced task's lease file.
// The agent's fence leaves DefaultMargin (250 ms) before the lease can end,
// so a 50 ms tick keeps the stop well inside it.
const fenceTick = 50 * time.Millisecond

// fenceWatch enforces the task's lease fence (drivers.LeaseFile) from the
// shim, so that it holds when the agent is frozen (SIGSTOP), killed, cut
// off, or lost its data dir: drivers.FenceWatch decides, this signals —
// SIGTERM to the process group of pid (the init of the task's namespaces,
// which forwards it to every process there), SIGKILL to the group and the
// cgroup. It watches from the moment the init is forked, since the init
// and the task stage take a while to set up before the command runs
// (running is closed once it runs, or the init ended). It looks at once,
// then every fenceTick, until done is closed or it killed the task.
// fenced (spec.Fenced) says the task has a fence: without one, and no
// lease file either, it returns at once. fencedOut reports whether it
// signalled the task.
func fenceWatch(taskDir string, fenced bool, pid int, group cgroup.Group, running, done <-chan struct{}, fencedOut *atomic.Bool) {
	if _, ok, _ := drivers.ReadLeaseFence(taskDir); !ok && !fenced {
		return
	}
	tick := time.NewTicker(fenceTick)
	defer tick.Stop()
	var w drivers.FenceWatch
	started := false
	for {
		f, ok, err := drivers.ReadLeaseFence(taskDir)
		switch step, why := w.Observe(f, ok, err, drivers.BootClock(), started); step {
		case drivers.FenceKill:
			fencedOut.Store(true)
			fmt.Fprintf(os.Stderr, "strata shim: lease fence reached (%s): killing the task\n", why)
			syscall.Kill(-pid, syscall.SIGKILL)
			if group != nil {
				group.Kill(time.Second)
			}
			return
		case drivers.FenceTerm:
			fencedOut.Store(true)
			fmt.Fprintf(os.Stderr, "strata shim: lease fence reached (%s): stopping the task\n", why)
			syscall.Kill(-pid, syscall.SIGTERM)
		}
		select {
		case <-done:
			return
		case <-running:
			started, running = true, nil // a nil channel never fires again
		case <-tick.C:
		}
	}
}
