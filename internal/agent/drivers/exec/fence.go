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
// cut off: SIGTERM to the task's process group at StopAt, SIGKILL to the
// group and the cgroup at KillAt. It returns at once when the task has no
// lease file; otherwise it runs until done is closed. fenced reports
// whether it signalled the task.
func fenceWatch(taskDir string, pid int, group cgroup.Group, done <-chan struct{}, fenced *atomic.Bool) {
	if _, ok, _ := drivers.ReadLeaseFence(taskDir); !ok {
		return
	}
	tick := time.NewTicker(fenceTick)
	defer tick.Stop()
	termSent := false
	for {
		select {
		case <-done:
			return
		case <-tick.C:
		}
		// An unreadable file keeps the last fence: the agent rewrites it
		// atomically, so this is a transient error at worst.
		f, ok, err := drivers.ReadLeaseFence(taskDir)
		if err != nil || !ok {
			continue
		}
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
		case now >= f.StopAt && !termSent:
			fenced.Store(true)
			termSent = true
			fmt.Fprintf(os.Stderr, "strata shim: lease fence reached (%s): stopping the task\n", f.Why)
			syscall.Kill(-pid, syscall.SIGTERM)
		case now < f.StopAt && termSent:
			// Renewed in time after all; SIGTERM was sent and may end the
			// task, which then reports itself fenced.
		}
	}
}
