package exec

import (
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/strata-dev/strata/internal/agent/drivers/taskfile"
)

// File descriptors between the stages. The shim hands the init syncFD and
// statusFD; the init hands the task stage syncFD, specFD and the cgroup
// files from procsFD on.
const (
	// syncFD is the pipe the shim waits on: every stage keeps it open
	// until the task command's execve closes it (close-on-exec), which
	// tells the shim the task runs.
	syncFD = 3
	// statusFD is where the init writes how the task ended: the init, as
	// pid 1 of its namespace, cannot die by the task's signal itself.
	statusFD = 4
	// specFD carries the spec from the init to the task stage: the task
	// directory that holds spec.json is hidden from the task's mounts.
	specFD = 4
	// procsFD is the first of the task's cgroup.procs files, opened by
	// the init before the cgroup file system became read-only.
	procsFD = 5
)

// taskStatus is the init's report of the task's end.
type taskStatus struct {
	ExitCode int `json:"exitCode"`
	Signal   int `json:"signal,omitempty"`
}

// forwardedSignals are passed by the init to every process of the task.
var forwardedSignals = []os.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP,
	syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2}

// ExecMain is `strata __exec <spec.json>`, the init of the task's pid
// namespace. The shim starts it in new pid, mount, uts and ipc namespaces;
// it stays outside the task's cgroups (it is not the task's to account
// for), builds the task's view of the file system, starts the task stage
// (`strata __task`), forwards stop signals to every process of the
// namespace, reaps them, and reports the task's status on statusFD. When
// it returns, the kernel kills whatever is left in the namespace. It
// returns 126 (could not confine) or 127 (could not run) on failure.
func ExecMain(args []string) int {
	syscall.CloseOnExec(syncFD)
	syscall.CloseOnExec(statusFD)
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: strata __exec <spec.json>")
		return 127
	}
	var s spec
	if ok, err := taskfile.ReadJSON(args[0], &s); !ok || err != nil {
		fmt.Fprintf(os.Stderr, "strata exec: read spec %s: %v\n", args[0], err)
		return 127
	}
	data, err := json.Marshal(&s)
	if err != nil {
		fmt.Fprintf(os.Stderr, "strata exec: %v\n", err)
		return 127
	}
	// Opened now: the task stage joins through these after the cgroup
	// file system is read-only in this mount namespace.
	var procs []*os.File
	for _, f := range s.ProcsFiles {
		pf, err := os.OpenFile(f, os.O_WRONLY, 0)
		if err != nil {
			fmt.Fprintf(os.Stderr, "strata exec: open cgroup: %v\n", err)
			return 126
		}
		procs = append(procs, pf)
	}
	if s.IsolatedNetwork {
		if err := loopbackUp(); err != nil {
			fmt.Fprintf(os.Stderr, "strata exec: %v\n", err)
			return 126
		}
	}
	if err := setupMounts(&s); err != nil {
		fmt.Fprintf(os.Stderr, "strata exec: %v\n", err)
		return 126
	}
	specR, specW, err := os.Pipe()
	if err != nil {
		fmt.Fprintf(os.Stderr, "strata exec: %v\n", err)
		return 126
	}
	files := []uintptr{0, 1, 2, syncFD, specR.Fd()}
	for _, pf := range procs {
		files = append(files, pf.Fd())
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, forwardedSignals...)
	pid, err := syscall.ForkExec("/proc/self/exe", []string{"strata", "__task"}, &syscall.ProcAttr{
		Dir:   "/",
		Env:   []string{},
		Files: files,
	})
	specR.Close()
	syscall.Close(syncFD)
	for _, pf := range procs {
		pf.Close()
	}
	if err != nil {
		specW.Close()
		fmt.Fprintf(os.Stderr, "strata exec: start task stage: %v\n", err)
		return 127
	}
	specW.Write(data)
	specW.Close()
	go func() {
		for sig := range sigs {
			// -1: every process of the namespace but the init itself.
			syscall.Kill(-1, sig.(syscall.Signal))
		}
	}()
	st := reapTask(pid)
	syscall.Kill(-1, syscall.SIGKILL)
	report, _ := json.Marshal(st)
	status := os.NewFile(statusFD, "status")
	status.Write(report)
	status.Close()
	return 0
}

// reapTask reaps every process of the namespace (orphans re-parent to the
// init) until the task's main process exits, and returns how it did.
func reapTask(pid int) taskStatus {
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return taskStatus{ExitCode: -1}
		}
		if got != pid {
			continue
		}
		if ws.Signaled() {
			return taskStatus{ExitCode: 128 + int(ws.Signal()), Signal: int(ws.Signal())}
		}
		return taskStatus{ExitCode: ws.ExitStatus()}
	}
}

// loopbackUp brings up lo in the init's new network namespace (it starts
// down): an isolated task still talks to itself over 127.0.0.1.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("loopback: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return fmt.Errorf("loopback: %w", err)
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("loopback flags: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("loopback up: %w", err)
	}
	return nil
}
