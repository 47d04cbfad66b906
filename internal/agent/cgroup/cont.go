package cgroup

import (
	"errors"
	"fmt"
	"syscall"
)

// Continue sends SIGCONT to every process of g: what a task restored
// stopped (criu's leave-stopped) needs to run. A group with no process
// left is an error: the task died while it was stopped.
func Continue(g Group) error {
	if g == nil {
		return errors.New("no cgroup to continue")
	}
	pids, err := g.Procs()
	if err != nil {
		return err
	}
	if len(pids) == 0 {
		return errors.New("no process left in its cgroup")
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, syscall.SIGCONT); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("pid %d: %w", pid, err)
		}
	}
	return nil
}
