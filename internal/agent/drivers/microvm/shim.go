package microvm

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/strata-dev/strata/internal/agent/drivers"
	"github.com/strata-dev/strata/internal/agent/drivers/taskfile"
	"github.com/strata-dev/strata/internal/agent/logs"
)

// ShimMain is `strata __microvm-shim <taskdir>`. It runs qemu as described
// by <taskdir>/microvm.json, copies the serial console into the task's
// stdout log (qemu's own messages into its stderr log), forwards a SIGTERM
// to the guest as a stop request, and writes <taskdir>/exit.json with the
// exit code the guest reported. It returns the shim's own exit status.
func ShimMain(args []string) int {
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: strata __microvm-shim <taskdir>")
		return 2
	}
	taskDir := args[0]
	res := runShim(taskDir)
	res.FinishedAt = time.Now()
	if err := taskfile.WriteJSON(filepath.Join(taskDir, exitFile), res); err != nil {
		fmt.Fprintf(os.Stderr, "strata microvm shim: %v\n", err)
		return 1
	}
	return 0
}

func failed(format string, a ...any) *drivers.ExitResult {
	return &drivers.ExitResult{ExitCode: -1, Err: fmt.Sprintf(format, a...)}
}

func runShim(taskDir string) *drivers.ExitResult {
	// SIGTERM is the driver's stop request; the others must not kill the
	// shim, which outlives the agent and its terminal.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM, syscall.SIGPIPE)

	var s shimSpec
	if ok, err := taskfile.ReadJSON(filepath.Join(taskDir, specFile), &s); !ok || err != nil {
		return failed("read micro-VM spec: %v", err)
	}
	if len(s.QEMUArgv) == 0 {
		return failed("micro-VM spec has no qemu command")
	}
	if s.BootTimeout <= 0 {
		s.BootTimeout = 2 * time.Minute
	}
	stdoutLog, err := logs.NewWriter(taskDir, "stdout", s.LogMaxBytes, s.LogMaxFiles)
	if err != nil {
		return failed("open stdout log: %v", err)
	}
	defer stdoutLog.Close()
	stderrLog, err := logs.NewWriter(taskDir, "stderr", s.LogMaxBytes, s.LogMaxFiles)
	if err != nil {
		return failed("open stderr log: %v", err)
	}
	defer stderrLog.Close()
	qemuErr := &tailWriter{w: stderrLog}

	consoleR, consoleW, err := os.Pipe()
	if err != nil {
		return failed("console pipe: %v", err)
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return failed("console pipe: %v", err)
	}
	if why := drivers.FenceBeforeStart(taskDir, s.Fenced); why != "" {
		fmt.Fprintf(os.Stderr, "strata microvm shim: %s\n", why)
		return &drivers.ExitResult{ExitCode: -1, Err: why, Fenced: true}
	}
	cmd := exec.Command(s.QEMUArgv[0], s.QEMUArgv[1:]...)
	cmd.Dir = taskDir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, consoleW, qemuErr
	// qemu dies with its shim: a VM nobody watches is never left behind.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return failed("start qemu: %v", err)
	}
	inR.Close()
	consoleW.Close()
	if err := taskfile.WriteJSON(filepath.Join(taskDir, runFile), runInfo{PID: cmd.Process.Pid, StartedAt: start}); err != nil {
		fmt.Fprintf(os.Stderr, "strata microvm shim: %v\n", err)
	}

	booted := make(chan struct{})
	var bootOnce sync.Once
	copier := &consoleCopier{out: stdoutLog, booted: []byte(s.BootedMarker), exit: []byte(s.ExitMarker), onBoot: func() {
		bootOnce.Do(func() {
			now := time.Now()
			taskfile.WriteJSON(filepath.Join(taskDir, bootFile), bootInfo{BootedAt: now, Boot: now.Sub(start)})
			close(booted)
		})
	}}
	copied := make(chan error, 1)
	go func() { copied <- copier.Run(consoleR) }()

	var bootTimedOut bool
	var mu sync.Mutex
	go func() {
		timer := time.NewTimer(s.BootTimeout)
		defer timer.Stop()
		select {
		case <-booted:
		case <-timer.C:
			mu.Lock()
			bootTimedOut = true
			mu.Unlock()
			cmd.Process.Kill()
		}
	}()
	var fenced atomic.Bool
	vmDone := make(chan struct{})
	defer close(vmDone)
	go fenceWatch(taskDir, s.Fenced, booted, vmDone, &fenced,
		func() { io.WriteString(inW, s.StopLine+"\n") }, func() { cmd.Process.Kill() })
	go func() {
		for sig := range sigs {
			if sig == syscall.SIGTERM {
				// The pipe holds the line until the guest's init reads
				// it, even while the guest still boots.
				io.WriteString(inW, s.StopLine+"\n")
			}
		}
	}()

	waitErr := cmd.Wait()
	copyErr := <-copied
	consoleR.Close()
	if copyErr != nil {
		fmt.Fprintf(os.Stderr, "strata microvm shim: copy console: %v\n", copyErr)
	}
	if code, ok := copier.ExitCode(); ok {
		return &drivers.ExitResult{ExitCode: code, Fenced: fenced.Load()}
	}
	mu.Lock()
	timedOut := bootTimedOut
	mu.Unlock()
	if timedOut {
		return failed("micro-VM did not reach userspace within %s (see the task's logs)", s.BootTimeout)
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return &drivers.ExitResult{Signal: int(ws.Signal()), ExitCode: 128 + int(ws.Signal()), Fenced: fenced.Load()}
	}
	if waitErr != nil {
		msg := qemuErr.last()
		if msg == "" {
			msg = waitErr.Error()
		}
		return failed("qemu failed before the guest reported an exit code: %s", msg)
	}
	select {
	case <-booted:
		return failed("the guest stopped without reporting an exit code (its init died or the kernel panicked; see the task's logs)")
	default:
		return failed("the guest stopped before reaching userspace (see the task's logs)")
	}
}

// tailWriter passes writes on and keeps the last line, for messages.
type tailWriter struct {
	w    io.Writer
	mu   sync.Mutex
	tail []byte
}

func (t *tailWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	t.tail = append(t.tail, p...)
	if len(t.tail) > 4096 {
		t.tail = t.tail[len(t.tail)-4096:]
	}
	t.mu.Unlock()
	return t.w.Write(p)
}

func (t *tailWriter) last() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return lastLine(strings.TrimSpace(string(t.tail)))
}
