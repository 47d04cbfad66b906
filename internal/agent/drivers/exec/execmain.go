package exec

import (
	"fmt"
	"os"
	osexec "os/exec"
	"strconv"
	"strings"
	"syscall"
)

// syncFD is the pipe the shim waits on: exec keeps it open until execve
// closes it (close-on-exec), which tells the shim the task command runs.
const syncFD = 3

// ExecMain is `strata __exec <spec.json>`: it joins the task's cgroups and
// then replaces itself with the task command. It returns only on failure,
// with 126 (could not confine) or 127 (could not run).
func ExecMain(args []string) int {
	syscall.CloseOnExec(syncFD)
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: strata __exec <spec.json>")
		return 127
	}
	var s spec
	if ok, err := readJSON(args[0], &s); !ok || err != nil {
		fmt.Fprintf(os.Stderr, "strata exec: read spec %s: %v\n", args[0], err)
		return 127
	}
	pid := []byte(strconv.Itoa(os.Getpid()))
	for _, f := range s.ProcsFiles {
		// A task must never run outside its limits: fail rather than go on.
		if err := os.WriteFile(f, pid, 0o644); err != nil {
			fmt.Fprintf(os.Stderr, "strata exec: join cgroup: %v\n", err)
			return 126
		}
	}
	if s.WorkDir != "" {
		if err := os.Chdir(s.WorkDir); err != nil {
			fmt.Fprintf(os.Stderr, "strata exec: %v\n", err)
			return 127
		}
	}
	if len(s.Command) == 0 {
		fmt.Fprintln(os.Stderr, "strata exec: empty command")
		return 127
	}
	path := s.Command[0]
	if !strings.Contains(path, "/") {
		found, err := osexec.LookPath(path)
		if err != nil {
			fmt.Fprintf(os.Stderr, "strata exec: %v\n", err)
			return 127
		}
		path = found
	}
	err := syscall.Exec(path, s.Command, s.Env)
	fmt.Fprintf(os.Stderr, "strata exec: exec %s: %v\n", path, err)
	return 127
}
