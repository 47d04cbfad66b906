package microvm

import (
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/strata-dev/strata/internal/agent/drivers"
)

// fenceTick is how often the shim looks at a fenced task's lease file, as
// the exec shim does.
const fenceTick = 50 * time.Millisecond

// fenceWatch enforces a fenced task's lease fence (drivers.LeaseFile) from
// the micro-VM's shim, so that it holds without the agent: drivers.FenceWatch
// decides; stop asks the guest's init to SIGTERM the command (once the
// guest booted: before, nothing reads the console), kill ends qemu. It runs
// until done is closed or it killed the VM; fenced reports whether it
// acted. A task that is not fenced and has no lease file is not watched.
func fenceWatch(taskDir string, isFenced bool, booted, done <-chan struct{}, fenced *atomic.Bool, stop, kill func()) {
	if _, ok, _ := drivers.ReadLeaseFence(taskDir); !ok && !isFenced {
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
			fenced.Store(true)
			fmt.Fprintf(os.Stderr, "strata microvm shim: lease fence reached (%s): killing the VM\n", why)
			kill()
			return
		case drivers.FenceTerm:
			fenced.Store(true)
			fmt.Fprintf(os.Stderr, "strata microvm shim: lease fence reached (%s): stopping the guest's command\n", why)
			stop()
		}
		select {
		case <-done:
			return
		case <-booted:
			started, booted = true, nil
		case <-tick.C:
		}
	}
}
