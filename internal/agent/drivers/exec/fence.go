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
// shim, so that it holds when the agent is frozen (SIGSTOP), killed, or
// cut off: SIGTERM to the process group of pid (the init of the task's
// namespaces, which forwards it to every process there) at StopAt,
// SIGKILL to the group and the cgroup at KillAt. It watches from the
// moment the init is forked, since the init and the task stage take a
// while to set up before the command runs: KillAt holds during that setup
// too, while SIGTERM waits until running is closed (the command runs, or
// the init ended) and then goes at once, because before that it could
// reach an init without its handler yet, and the kernel drops such a
// signal to pid 1 of a namespace. It looks at once, then every fenceTick.
// It returns at once when the task has no lease file; otherwise it runs
// until done is closed. fenced reports whether it signalled the task.
func fenceWatch(taskDir string, pid int, group cgroup.Group, running, done <-chan struct{}, fenced *atomic.Bool) {
	if _, ok, _ := drivers.ReadLeaseFence(taskDir); !ok {
		return
	}
	tick := time.NewTicker(fenceTick)
	defer tick.Stop()
	started, termSent := false, false
	for {
		// An unreadable file keeps the last fence: the agent rewrites it
		// atomically, so this is a transient error at worst.
		if f, ok, err := drivers.ReadLeaseFence(taskDir); err == nil && ok {
			now := drivers.BootClock()
			switch {
			case now >= f.KillAt:
				fenced.Store(true)
				fmt.Fprintf(os.Stderr, "strata shim: lease fence reached (%s): killing the task\n", f.Why)
				syscall.Kill(-pid, syscall.SIGKILL)
				if group != nil {
					group.Kill(time.Second)
				}
				return
			case now >= f.StopAt && started && !termSent:
				fenced.Store(true)
				termSent = true
				fmt.Fprintf(os.Stderr, "strata shim: lease fence reached (%s): stopping the task\n", f.Why)
				syscall.Kill(-pid, syscall.SIGTERM)
			case now < f.StopAt && termSent:
				// Renewed in time after all; SIGTERM was sent and may end the
				// task, which then reports itself fenced.
			}
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

// fenceBeforeStart says why the task must not start when its lease fence
// has already reached its stop time: the lease may be over, and the copy
// the fence protects against may run elsewhere. Empty: start it.
func fenceBeforeStart(taskDir string) string {
	f, ok, err := drivers.ReadLeaseFence(taskDir)
	if err != nil || !ok || drivers.BootClock() < f.StopAt {
		return ""
	}
	return fmt.Sprintf("not started: the lease fence was reached before the task could start (%s)", f.Why)
}
