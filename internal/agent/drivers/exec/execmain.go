package exec

import (
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/strata-dev/strata/internal/agent/drivers/taskfile"
)

// File descriptors between the stages. The shim hands the init stdin,
// stdout, stderr, syncFD and statusFD; the init hands the task stage the
// first four and specFD.
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
)

// initEnv is the init's whole environment. Go's runtime would keep the
// CPU limit files of the shim's cgroup open to follow them (cgroup-aware
// GOMAXPROCS): files on the host's cgroup mounts, which leave the task's
// mount namespace, so criu could not dump the init.
const initEnv = "GODEBUG=containermaxprocs=0,updatemaxprocs=0"

func init() {
	// The init enters its cgroup namespace on the thread that forks the
	// task stage, and criu takes a process's namespaces from its main
	// thread: locked in an init function, main (ExecMain) runs on the
	// main thread.
	if len(os.Args) > 1 && os.Args[1] == "__exec" {
		runtime.LockOSThread()
	}
}

// taskStatus is the init's report of the task's end.
type taskStatus struct {
	ExitCode int `json:"exitCode"`
	Signal   int `json:"signal,omitempty"`
}

// forwardedSignals are passed by the init to every process of the task.
var forwardedSignals = []os.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP,
	syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2}

// ExecMain is `strata __exec <spec.json>`, the init of the task's pid
// namespace. The shim starts it in new pid, mount, uts and ipc namespaces,
// its own session; it builds the task's view of the file system, joins the
// task's cgroups and enters a cgroup namespace rooted there (so the task
// sees only its own cgroups, as "/"), starts the task stage (`strata
// __task`), forwards stop signals to every process of the namespace, reaps
// them, and reports the task's status on statusFD. The whole tree is one
// set of namespaces under one root, the layout criu dumps (checkpoint.go).
// When it returns, the kernel kills whatever is left in the namespace. It
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
	// Opened now: the init joins through these once the cgroup file
	// system is replaced in this mount namespace.
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
	// stdin was opened by the shim, in the host's mount namespace: the
	// task gets the /dev/null of its own (a checkpoint finds every file
	// of the tree in the tree's mount namespace).
	if err := reopenDevNull(); err != nil {
		fmt.Fprintf(os.Stderr, "strata exec: %v\n", err)
		return 126
	}
	// The shim started it in the task directory, covered now.
	if err := os.Chdir("/"); err != nil {
		fmt.Fprintf(os.Stderr, "strata exec: %v\n", err)
		return 126
	}
	// Last, so that little of the init is charged to the task: the
	// task's cgroups and a cgroup namespace rooted there, which the task
	// stage inherits (the init with it: criu wants one cgroup namespace
	// for the whole tree). The files are closed at once: none stays open
	// under the cgroup mounts of the task's view.
	if err := enterCgroups(procs); err != nil {
		fmt.Fprintf(os.Stderr, "strata exec: %v\n", err)
		return 126
	}
	specR, specW, err := os.Pipe()
	if err != nil {
		fmt.Fprintf(os.Stderr, "strata exec: %v\n", err)
		return 126
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, forwardedSignals...)
	pid, err := syscall.ForkExec("/proc/self/exe", []string{"strata", "__task"}, &syscall.ProcAttr{
		Dir:   "/",
		Env:   []string{},
		Files: []uintptr{0, 1, 2, syncFD, specR.Fd()},
	})
	specR.Close()
	syscall.Close(syncFD)
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

// enterCgroups joins the task's cgroups through their cgroup.procs files
// (a task must never run outside its limits: it fails rather than go on),
// closes them and enters a new cgroup namespace. A cgroup namespace
// belongs to a thread: this must be the main thread (init), which forks
// the task stage.
func enterCgroups(procs []*os.File) error {
	defer func() {
		for _, pf := range procs {
			pf.Close()
		}
	}()
	for _, pf := range procs {
		if _, err := pf.Write([]byte("0")); err != nil {
			return fmt.Errorf("join cgroup: %w", err)
		}
	}
	if err := unix.Unshare(unix.CLONE_NEWCGROUP); err != nil {
		return fmt.Errorf("cgroup namespace: %w", err)
	}
	return nil
}

// reopenDevNull replaces stdin with /dev/null opened in this mount
// namespace.
func reopenDevNull() error {
	f, err := os.Open(os.DevNull)
	if err != nil {
		return fmt.Errorf("open %s: %w", os.DevNull, err)
	}
	defer f.Close()
	if err := unix.Dup2(int(f.Fd()), 0); err != nil {
		return fmt.Errorf("stdin: %w", err)
	}
	return nil
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
