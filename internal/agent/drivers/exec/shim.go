package exec

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/strata-dev/strata/internal/agent/cgroup"
	"github.com/strata-dev/strata/internal/agent/criu"
	"github.com/strata-dev/strata/internal/agent/drivers"
	"github.com/strata-dev/strata/internal/agent/drivers/taskfile"
	"github.com/strata-dev/strata/internal/agent/logs"
)

// prSetChildSubreaper makes orphaned descendants of the task re-parent to
// the shim, which reaps them, instead of to init.
const prSetChildSubreaper = 36

// copyGrace bounds how long the shim drains the task's pipes after the task
// exited: a descendant may keep them open forever.
const copyGrace = 2 * time.Second

// ShimMain is `strata __shim <taskdir>`. It runs the task described by
// <taskdir>/spec.json through `strata __exec`, copies its output into
// rotating logs, waits for it and writes <taskdir>/exit.json. It returns the
// shim's own exit status.
func ShimMain(args []string) int {
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: strata __shim <taskdir>")
		return 2
	}
	taskDir := args[0]
	res := runShim(taskDir)
	res.FinishedAt = time.Now()
	if err := taskfile.WriteJSON(filepath.Join(taskDir, exitFile), res); err != nil {
		fmt.Fprintf(os.Stderr, "strata shim: %v\n", err)
		return 1
	}
	return 0
}

func runShim(taskDir string) *drivers.ExitResult {
	// The shim outlives the agent and its terminal; only SIGKILL stops it.
	// The signals are caught, not ignored: an ignored disposition would be
	// inherited by the task across execve.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM, syscall.SIGPIPE)
	go func() {
		for range sigs {
		}
	}()
	// Whatever the agent's own parents left open (not close-on-exec)
	// stays out of the task's tree: a checkpoint would have to find it
	// in the task's mount namespace.
	unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		fmt.Fprintf(os.Stderr, "strata shim: set child subreaper: %v\n", errno)
	}
	var s spec
	if ok, err := taskfile.ReadJSON(filepath.Join(taskDir, specFile), &s); !ok || err != nil {
		return &drivers.ExitResult{ExitCode: -1, Err: fmt.Sprintf("read task spec: %v", err)}
	}
	group, err := cgroup.Open(cgroup.Version(s.CgroupVersion), s.CgroupRoot, s.CgroupRel)
	if err != nil {
		return &drivers.ExitResult{ExitCode: -1, Err: err.Error()}
	}
	oomBefore, _ := group.OOMKills()

	var copiers sync.WaitGroup
	outW, err := startCopy(&copiers, taskDir, "stdout", s)
	if err != nil {
		return &drivers.ExitResult{ExitCode: -1, Err: err.Error()}
	}
	errW, err := startCopy(&copiers, taskDir, "stderr", s)
	if err != nil {
		return &drivers.ExitResult{ExitCode: -1, Err: err.Error()}
	}
	devNull, err := os.Open(os.DevNull)
	if err != nil {
		return &drivers.ExitResult{ExitCode: -1, Err: err.Error()}
	}
	// The stages hold the write end of syncW as fd 3, close-on-exec: EOF
	// on syncR means the task command replaced them, inside its cgroups.
	syncR, syncW, err := os.Pipe()
	if err != nil {
		return &drivers.ExitResult{ExitCode: -1, Err: err.Error()}
	}
	defer syncR.Close()
	statusR, statusW, err := os.Pipe()
	if err != nil {
		return &drivers.ExitResult{ExitCode: -1, Err: err.Error()}
	}
	defer statusR.Close()
	if why := drivers.FenceBeforeStart(taskDir, s.Fenced); why != "" {
		outW.Close()
		errW.Close()
		devNull.Close()
		syncW.Close()
		statusW.Close()
		copiers.Wait()
		fmt.Fprintf(os.Stderr, "strata shim: %s\n", why)
		return &drivers.ExitResult{ExitCode: -1, Err: why, Fenced: true}
	}
	argv := append(append([]string(nil), s.ExecCommand...), filepath.Join(taskDir, specFile))
	cloneFlags := uintptr(syscall.CLONE_NEWPID | syscall.CLONE_NEWNS | syscall.CLONE_NEWUTS | syscall.CLONE_NEWIPC)
	if s.IsolatedNetwork {
		cloneFlags |= syscall.CLONE_NEWNET
	}
	attr := &syscall.ProcAttr{
		Dir: taskDir,
		// The init needs no environment of the task's (secrets
		// included: they reach the task stage through a pipe).
		Env:   []string{initEnv},
		Files: []uintptr{devNull.Fd(), outW.Fd(), errW.Fd(), syncW.Fd(), statusW.Fd()},
		Sys: &syscall.SysProcAttr{
			// The init of the task's own pid, mount, uts and ipc
			// namespaces, and network when isolated (it enters the
			// cgroup namespace itself, in the task's cgroups).
			Cloneflags: cloneFlags,
			// Its own session (and so process group): a stop signals
			// the task's init but never the shim, and no process of
			// the tree belongs to a session led from outside it.
			Setsid: true,
		},
	}
	if s.Checkpointable {
		// `strata __plain` becomes the task (or criu restoring it) in the
		// host's namespaces: no init, so no status report either, but
		// for a restored init (criu makes its namespaces).
		if !s.RestoreTree {
			attr.Files = attr.Files[:4]
		}
		attr.Sys = &syscall.SysProcAttr{Setpgid: true}
	}
	pid, err := syscall.ForkExec(argv[0], argv, attr)
	// Only the stages may hold the write ends: EOF must follow their exit.
	outW.Close()
	errW.Close()
	devNull.Close()
	syncW.Close()
	statusW.Close()
	if err != nil {
		copiers.Wait()
		return &drivers.ExitResult{ExitCode: -1, Err: fmt.Sprintf("start task: %v", err)}
	}
	if s.RestorePidFile != "" {
		// Whatever criu wrote before failing is also on its stderr.
		io.Copy(io.Discard, syncR)
		restored, res := awaitRestore(pid, s.RestorePidFile)
		if res != nil {
			go reapOrphans()
			copiers.Wait() // criu's own words are in the task's stderr log now
			if strings.HasSuffix(res.Err, ": ") {
				res.Err += lastLogLine(filepath.Join(taskDir, "stderr.log"))
			}
			return res
		}
		pid = restored
	}
	var fenced atomic.Bool
	running, taskDone := make(chan struct{}), make(chan struct{})
	go fenceWatch(taskDir, s.Fenced, pid, group, running, taskDone, &fenced)
	// Whatever a stage wrote before failing is also on its stderr (the log).
	io.Copy(io.Discard, syncR)
	close(running)
	info := runInfo{PID: taskPID(pid), InitPID: pid, StartedAt: time.Now()}
	if s.Checkpointable && !s.RestoreTree {
		info = runInfo{PID: pid, StartedAt: info.StartedAt}
	}
	if info.PID == 0 {
		info.PID = pid // the task stage failed or the task already ended
	}
	if err := taskfile.WriteJSON(filepath.Join(taskDir, runFile), info); err != nil {
		fmt.Fprintf(os.Stderr, "strata shim: %v\n", err)
	}

	status := reapUntil(pid)
	close(taskDone)
	res := &drivers.ExitResult{Fenced: fenced.Load()}
	var st taskStatus
	if report, err := io.ReadAll(statusR); err == nil && len(report) > 0 && json.Unmarshal(report, &st) == nil {
		res.ExitCode, res.Signal = st.ExitCode, st.Signal
	} else {
		// The init itself ended without a report: killed (a stop's
		// SIGKILL, a fence), or it could not set the task up (126, 127).
		switch {
		case status.Signaled():
			res.Signal = int(status.Signal())
			res.ExitCode = 128 + res.Signal
		default:
			res.ExitCode = status.ExitStatus()
		}
	}
	// The OOM killer SIGKILLs the largest process of the group: the task
	// itself, or a child whose death makes the task exit non-zero.
	if oomAfter, err := group.OOMKills(); err == nil && oomAfter > oomBefore && res.ExitCode != 0 {
		res.OOMKilled = true
		res.MemoryMax, _ = group.MemoryLimit()
	}
	go reapOrphans()
	drained := make(chan struct{})
	go func() { copiers.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(copyGrace):
	}
	return res
}

// startCopy opens the rotating log of stream and starts copying a new pipe
// into it; it returns the pipe's write end for the task.
func startCopy(wg *sync.WaitGroup, taskDir, stream string, s spec) (*os.File, error) {
	w, err := logs.NewWriter(taskDir, stream, s.LogMaxBytes, s.LogMaxFiles)
	if err != nil {
		return nil, fmt.Errorf("open %s log: %w", stream, err)
	}
	r, pw, err := os.Pipe()
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("pipe: %w", err)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer w.Close()
		defer r.Close()
		if _, err := io.Copy(w, r); err != nil {
			fmt.Fprintf(os.Stderr, "strata shim: copy %s: %v\n", stream, err)
		}
	}()
	return pw, nil
}

// reapUntil reaps children (the task and orphans re-parented to the shim)
// until the task itself exits, and returns its status.
func reapUntil(pid int) syscall.WaitStatus {
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return ws // ECHILD: nothing left to wait for
		}
		if got == pid {
			return ws
		}
	}
}

// reapOrphans reaps descendants that outlive the task until the agent kills
// the task's cgroup or the shim exits.
func reapOrphans() {
	for {
		var ws syscall.WaitStatus
		if _, err := syscall.Wait4(-1, &ws, 0, nil); err != nil && err != syscall.EINTR {
			return
		}
	}
}

// taskPID returns the host pid of the init's only child, the task, or 0.
func taskPID(initPID int) int {
	if children := procChildren(initPID); len(children) > 0 {
		return children[0]
	}
	return 0
}

// awaitRestore waits for `criu restore --restore-detached` (pid) to end. On
// success criu has left the restored task behind, re-parented to the shim
// (the subreaper), and named it in pidFile; its pid is returned. Otherwise
// the result says why the restore failed.
func awaitRestore(pid int, pidFile string) (int, *drivers.ExitResult) {
	status := reapUntil(pid)
	if status.Exited() && status.ExitStatus() == 0 {
		data, err := os.ReadFile(pidFile)
		if err == nil {
			if restored, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && restored > 0 {
				return restored, nil
			}
		}
		return 0, &drivers.ExitResult{ExitCode: -1, Err: fmt.Sprintf("restore: criu named no task in %s", pidFile)}
	}
	// Empty when criu failed before its log: the shim adds what it printed.
	why := criu.ErrorTail(filepath.Dir(pidFile), criu.RestoreLog)
	return 0, &drivers.ExitResult{ExitCode: -1, Err: fmt.Sprintf("restore failed (criu exit status %d): %s", status.ExitStatus(), why)}
}

// lastLogLine is the last non-empty line of a log file, at most 512 bytes.
func lastLogLine(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	if len(last) > 512 {
		last = last[len(last)-512:]
	}
	return last
}
