package microvm

import (
	"fmt"
	"os"
	"sync/atomic"

	"github.com/strata-dev/strata/internal/agent/drivers"
)

// fenceWatch enforces a fenced task's lease fence (drivers.LeaseFile) from
// the micro-VM's shim, so that it holds without the agent
// (drivers.WatchFence): stop asks the guest's init to SIGTERM the command
// (once the guest booted: before, nothing reads the console), kill ends
// qemu. fenced reports whether it acted.
func fenceWatch(taskDir string, isFenced bool, booted, done <-chan struct{}, fenced *atomic.Bool, stop, kill func()) {
	drivers.WatchFence(taskDir, isFenced, drivers.IsClosed(booted), booted, done, func(step drivers.FenceStep, why string) {
		fenced.Store(true)
		if step == drivers.FenceTerm {
			fmt.Fprintf(os.Stderr, "strata microvm shim: lease fence reached (%s): stopping the guest's command\n", why)
			stop()
			return
		}
		fmt.Fprintf(os.Stderr, "strata microvm shim: lease fence reached (%s): killing the VM\n", why)
		kill()
	})
}
