package exec

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/strata-dev/strata/internal/agent/confine"
)

// TaskMain is `strata __task`, the last stage before the task command. It
// runs as root inside the task's namespaces and cgroups (the init's), reads
// the spec from specFD, becomes the task's user, keeps only the capability
// allow-list (none for a non-root user), sets no_new_privs, loads the
// default seccomp profile and execve's the command. It returns only on
// failure, with 126 (could not confine) or 127 (could not run).
func TaskMain(args []string) int {
	// Capabilities, no_new_privs and seccomp belong to a thread: the one
	// that calls execve must be the one confined.
	runtime.LockOSThread()
	syscall.CloseOnExec(syncFD)
	var s spec
	specPipe := os.NewFile(specFD, "spec")
	data, err := io.ReadAll(specPipe)
	specPipe.Close() // the command must not inherit it
	if err == nil {
		err = json.Unmarshal(data, &s)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "strata task: read spec: %v\n", err)
		return 127
	}
	if code, err := confineUser(&s); err != nil {
		fmt.Fprintf(os.Stderr, "strata task: %v\n", err)
		return code
	}
	path, err := lookPath(s.Command, s.Env)
	if err != nil {
		fmt.Fprintf(os.Stderr, "strata exec: %v\n", err)
		return 127
	}
	closeInheritedFDs()
	err = syscall.Exec(path, s.Command, s.Env)
	fmt.Fprintf(os.Stderr, "strata exec: exec %s: %v\n", path, err)
	return 127
}

// confineUser makes the calling thread the task's user with the task's
// capabilities, no_new_privs and seccomp profile, in its working
// directory.
func confineUser(s *spec) (int, error) {
	if err := confine.LimitBoundingSet(); err != nil {
		return 126, err
	}
	if err := syscall.Setgroups([]int{s.GID}); err != nil {
		return 126, fmt.Errorf("setgroups: %w", err)
	}
	if err := syscall.Setgid(s.GID); err != nil {
		return 126, fmt.Errorf("setgid %d: %w", s.GID, err)
	}
	if err := syscall.Setuid(s.UID); err != nil {
		return 126, fmt.Errorf("setuid %d: %w", s.UID, err)
	}
	// After setuid: the user's own permissions decide the working directory.
	if s.WorkDir != "" {
		if err := os.Chdir(s.WorkDir); err != nil {
			return 127, err
		}
	}
	var caps uint64
	if s.UID == 0 {
		caps = confine.AllowedMask()
	}
	if err := confine.SetCaps(caps); err != nil {
		return 126, err
	}
	if err := confine.SetNoNewPrivs(); err != nil {
		return 126, err
	}
	if err := confine.LoadDefaultProfile(); err != nil {
		return 126, err
	}
	return 0, nil
}

// lookPath finds the program like a shell would, with the task's PATH
// (not this process's, which is empty).
func lookPath(command []string, env []string) (string, error) {
	if len(command) == 0 || command[0] == "" {
		return "", fmt.Errorf("empty command")
	}
	if strings.Contains(command[0], "/") {
		return command[0], nil
	}
	path := basePath
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, command[0])
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("exec: %q: executable file not found in $PATH", command[0])
}

// closeInheritedFDs marks every descriptor above stderr close-on-exec: the
// command gets stdin, stdout and stderr only, never a descriptor that the
// agent's own parent, the agent, the shim or a stage left open.
func closeInheritedFDs() {
	if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err == nil {
		return
	}
	entries, err := os.ReadDir("/proc/self/fd") // kernels before 5.11
	if err != nil {
		return
	}
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
}
