package exec

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/strata-dev/strata/internal/agent/drivers/taskfile"
)

// PlainMain is `strata __plain <spec.json>`, the one stage of a
// checkpointable task (Config.Checkpointable): it joins the task's cgroups
// and becomes the task, confined like any task (user, capabilities,
// no_new_privs, seccomp) but in the host's namespaces, which criu can dump.
// With spec.RestorePidFile it becomes criu restoring the task instead: the
// restored processes get back the credentials and filters they were dumped
// with. It returns only on failure, with 126 (could not confine) or 127
// (could not run).
func PlainMain(args []string) int {
	runtime.LockOSThread()
	syscall.CloseOnExec(syncFD)
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: strata __plain <spec.json>")
		return 127
	}
	var s spec
	if ok, err := taskfile.ReadJSON(args[0], &s); !ok || err != nil {
		fmt.Fprintf(os.Stderr, "strata plain: read spec %s: %v\n", args[0], err)
		return 127
	}
	pid := []byte(strconv.Itoa(os.Getpid()))
	for _, f := range s.ProcsFiles {
		// A task must never run outside its limits: fail rather than go on.
		if err := os.WriteFile(f, pid, 0o644); err != nil {
			fmt.Fprintf(os.Stderr, "strata plain: join cgroup: %v\n", err)
			return 126
		}
	}
	if s.RestorePidFile == "" {
		if code, err := confineUser(&s); err != nil {
			fmt.Fprintf(os.Stderr, "strata plain: %v\n", err)
			return code
		}
	}
	if s.RestoreTree {
		// The restored tree inherits criu's cgroup namespace: rooted in
		// the task's cgroups, as the init made it (ExecMain). This
		// thread execs criu, so criu is in it.
		if err := unix.Unshare(unix.CLONE_NEWCGROUP); err != nil {
			fmt.Fprintf(os.Stderr, "strata plain: cgroup namespace: %v\n", err)
			return 126
		}
	}
	path, err := lookPath(s.Command, s.Env)
	if err != nil {
		fmt.Fprintf(os.Stderr, "strata plain: %v\n", err)
		return 127
	}
	if s.RestoreTree {
		// criu gets the init's status pipe too (--inherit-fd).
		unix.CloseRange(statusFD+1, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	} else {
		closeInheritedFDs()
	}
	err = syscall.Exec(path, s.Command, s.Env)
	fmt.Fprintf(os.Stderr, "strata plain: exec %s: %v\n", path, err)
	return 127
}
