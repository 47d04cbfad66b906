package agent

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"github.com/strata-dev/strata/internal/agent/logs"
)

// Disk pressure (issue 18 defect 9). The node's task directories and logs
// live in the data dir; a full file system there once killed every task
// (their logs' pipes closed) and failed every restart. The log writers now
// drop output rather than fill the last logs.DefaultKeepFree bytes, and
// the agent says when the file system is short: Node.DiskPressure, and a
// node-agent event on every change.

// diskEvery is how often the agent looks at its data dir's free space.
const diskEvery = 10 * time.Second

// diskPressure says why a file system with free of total bytes is short of
// space for the node, or "": below twice the log writers' reserve, or 5%
// of the file system, whichever is more.
func diskPressure(path string, free, total int64) string {
	floor := max(2*logs.DefaultKeepFree, total/20)
	if free >= floor {
		return ""
	}
	return fmt.Sprintf("data dir %s: %s free of %s (below %s): task logs are dropped below %s free",
		path, mib(free), mib(total), mib(floor), mib(logs.DefaultKeepFree))
}

func mib(n int64) string { return fmt.Sprintf("%dMiB", n>>20) }

// statDisk is the free and total bytes of path's file system for an
// unprivileged writer.
func statDisk(path string) (free, total int64, err error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return 0, 0, err
	}
	return int64(st.Bavail) * st.Bsize, int64(st.Blocks) * st.Bsize, nil
}

// checkDisk updates the node's DiskPressure; a change is logged and
// becomes a notice, which registers the node again with it.
func (a *Agent) checkDisk() {
	free, total, err := a.statDisk(a.cfg.DataDir)
	if err != nil {
		a.log.Warn("cannot read the data dir's free space", "err", err)
		return
	}
	why := diskPressure(a.cfg.DataDir, free, total)
	a.mu.Lock()
	was := a.node.DiskPressure
	a.node.DiskPressure = why
	a.mu.Unlock()
	switch {
	case why == was:
	case why != "":
		a.log.Error("disk pressure", "why", why)
		a.notice("disk pressure: " + why)
	default:
		a.log.Info("disk pressure over", "free", mib(free))
		a.notice(fmt.Sprintf("disk pressure over: data dir %s has %s free", a.cfg.DataDir, mib(free)))
	}
}

// diskLoop looks at the data dir's free space every diskEvery.
func (a *Agent) diskLoop(ctx context.Context) {
	t := time.NewTicker(diskEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			a.checkDisk()
		}
	}
}
