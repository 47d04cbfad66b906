package faultnet

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Process is a program the test runs inside a host. Its output goes to a
// log file in Net.Dir (one per process, appended across restarts).
// Methods are safe for concurrent use.
type Process struct {
	host    *Host
	name    string
	argv    []string
	logPath string

	mu      sync.Mutex
	cmd     *exec.Cmd
	exited  chan struct{} // closed when the current run ended
	starts  int
	lastErr error
}

// Start runs argv inside h (its network namespace; the file system and
// everything else are the machine's) and returns at once. name labels
// the process in logs. The test fails if it cannot start.
func (h *Host) Start(name string, argv ...string) *Process {
	h.net.t.Helper()
	p := &Process{host: h, name: name, argv: argv,
		logPath: filepath.Join(h.net.dir, h.name+"-"+name+".log")}
	if err := p.start(); err != nil {
		h.net.t.Fatalf("faultnet: start %s on %s: %v", name, h.name, err)
	}
	h.net.mu.Lock()
	h.net.procs = append(h.net.procs, p)
	h.net.mu.Unlock()
	return p
}

func (p *Process) start() error {
	log, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	p.starts++
	fmt.Fprintf(log, "=== faultnet: start %d of %s on %s at %s: %v\n", p.starts, p.name, p.host.name, time.Now().Format(time.RFC3339Nano), p.argv)
	// nsenter execs the program, so the pid is the program's own.
	args := append([]string{"--net=/run/netns/" + p.host.ns, "--"}, p.argv...)
	cmd := exec.Command("nsenter", args...)
	cmd.Env = p.host.net.daemonEnv(p.argv)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	p.cmd, p.exited = cmd, exited
	go func() {
		err := cmd.Wait()
		p.mu.Lock()
		p.lastErr = err
		p.mu.Unlock()
		close(exited)
	}()
	return nil
}

// Name is the process's label.
func (p *Process) Name() string { return p.name }

// Host is where the process runs.
func (p *Process) Host() *Host { return p.host }

// Pid is the pid of the current run (0 before the first).
func (p *Process) Pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// Running reports whether the current run has not ended (a paused
// process runs).
func (p *Process) Running() bool {
	p.mu.Lock()
	exited := p.exited
	p.mu.Unlock()
	select {
	case <-exited:
		return false
	default:
		return true
	}
}

// Exited is closed when the current run ends.
func (p *Process) Exited() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exited
}

// Kill sends SIGKILL to the process group and waits until the process is
// gone. Killing a process that ended is a no-op.
func (p *Process) Kill() {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	select {
	case <-exited:
		return
	default:
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
	<-exited
}

// Pause sends SIGSTOP: the process keeps its sockets and state but runs
// no code, as in a long GC pause or a stalled VM.
// It returns once every thread of the process is stopped: a signal is
// delivered asynchronously, and a request sent right after the kill could
// still be answered (TestPauseKillRestart failed so under load).
func (p *Process) Pause() {
	p.signal(syscall.SIGSTOP)
	p.mu.Lock()
	cmd := p.cmd
	p.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return
	}
	deadline := time.Now().Add(5 * time.Second)
	for !allThreadsStopped(cmd.Process.Pid) && time.Now().Before(deadline) {
		time.Sleep(2 * time.Millisecond)
	}
}

// allThreadsStopped reports whether every thread of pid is in the stopped
// state (T or t in /proc/<pid>/task/<tid>/stat), or pid is gone.
func allThreadsStopped(pid int) bool {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return true
	}
	for _, t := range tasks {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/stat", pid, t.Name()))
		if err != nil {
			continue
		}
		// The state follows the command name in parentheses, which may
		// itself hold spaces and parentheses.
		s := string(data)
		i := strings.LastIndexByte(s, ')')
		if i < 0 || i+2 >= len(s) {
			return false
		}
		if st := s[i+2]; st != 'T' && st != 't' && st != 'Z' && st != 'X' {
			return false
		}
	}
	return true
}

// Resume sends SIGCONT to a paused process.
func (p *Process) Resume() {
	p.signal(syscall.SIGCONT)
}

// Signal sends sig to the process (for SIGTERM and the like).
func (p *Process) Signal(sig syscall.Signal) { p.signal(sig) }

func (p *Process) signal(sig syscall.Signal) {
	p.mu.Lock()
	cmd := p.cmd
	p.mu.Unlock()
	if cmd != nil && cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, sig)
	}
}

// Restart starts the process again with the same arguments; a process
// that still runs is killed first.
func (p *Process) Restart() {
	p.host.net.t.Helper()
	p.Kill()
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.start(); err != nil {
		p.host.net.t.Fatalf("faultnet: restart %s on %s: %v", p.name, p.host.name, err)
	}
}

// LogPath is the file the process writes to.
func (p *Process) LogPath() string { return p.logPath }

// Log returns what the process wrote so far, over all its runs.
func (p *Process) Log() string {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return fmt.Sprintf("(log %s: %v)", p.logPath, err)
	}
	return string(b)
}

// ExitErr is how the last run ended (nil while it runs or after a clean
// exit).
func (p *Process) ExitErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lastErr
}
