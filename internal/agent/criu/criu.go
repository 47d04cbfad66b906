package criu

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Info is what a probe found.
type Info struct {
	Path      string // absolute path of the binary; empty when none was found
	Version   string // e.g. "4.2"
	Available bool   // `criu check` passed
	Reason    string // why the node cannot checkpoint, when it cannot
	// NoPreDump says why `criu pre-dump` (copying memory while the task
	// runs) cannot work here; empty when criu tracks dirty memory.
	NoPreDump string
}

// checkDirtyTrack runs `criu check --feature mem_dirty_track`: pre-dump
// and --track-mem need the kernel's soft-dirty page bits
// (CONFIG_MEM_SOFT_DIRTY); without them criu 4.2's pre-dump aborts
// ("BUG at criu/mem.c:46") and dump --track-mem refuses to start.
func checkDirtyTrack(ctx context.Context, path string) string {
	out, err := osexec.CommandContext(ctx, path, "check", "--feature", "mem_dirty_track").CombinedOutput()
	if err == nil {
		return ""
	}
	return fmt.Sprintf("criu check --feature mem_dirty_track: %v: %s (the kernel has no soft-dirty page tracking, CONFIG_MEM_SOFT_DIRTY)", err, lastLine(out))
}

// probeTimeout bounds `criu check` and `criu --version`.
const probeTimeout = 30 * time.Second

// checkAttempts is how many times Probe runs `criu check` before it
// believes a failure, checkRetryDelay the pause between them.
const (
	checkAttempts   = 3
	checkRetryDelay = 300 * time.Millisecond
)

// Probe finds criu (path, else on PATH) and checks that it works on this
// kernel. It never fails: Info says what is missing.
func Probe(ctx context.Context, path string) Info {
	if path == "" {
		found, err := osexec.LookPath("criu")
		if err != nil {
			return Info{Reason: "criu not found on PATH (install CRIU >= 4.1 or pass --criu-path)"}
		}
		path = found
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return Info{Reason: fmt.Sprintf("criu path %q: %v", path, err)}
	}
	info := Info{Path: abs}
	if st, err := os.Stat(abs); err != nil {
		info.Reason = fmt.Sprintf("criu path %q: %v", abs, err)
		return info
	} else if st.IsDir() || st.Mode()&0o111 == 0 {
		info.Reason = fmt.Sprintf("criu path %q is not an executable file", abs)
		return info
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	out, err := osexec.CommandContext(ctx, abs, "--version").CombinedOutput()
	if err != nil {
		info.Reason = fmt.Sprintf("criu --version: %v: %s", err, lastLine(out))
		return info
	}
	info.Version = ParseVersion(out)
	if os.Geteuid() != 0 {
		info.Reason = "checkpoint needs root (the agent runs as uid " + strconv.Itoa(os.Geteuid()) + ")"
		return info
	}
	// `criu check` has been seen to fail once and pass the next moment on
	// a busy machine ("Could not initialize kernel features detection"):
	// a node must not lose checkpointing for the agent's life to that, so
	// a failure is tried again; a missing feature fails every time.
	for attempt := 1; ; attempt++ {
		out, err = osexec.CommandContext(ctx, abs, "check").CombinedOutput()
		if err == nil {
			break
		}
		if attempt == checkAttempts || ctx.Err() != nil {
			info.Reason = fmt.Sprintf("criu check failed: %v: %s", err, lastLine(out))
			return info
		}
		time.Sleep(checkRetryDelay)
	}
	info.Available = true
	info.NoPreDump = checkDirtyTrack(ctx, abs)
	return info
}

var probed sync.Map // path -> Info

// ProbeOnce is Probe, run once per path in a process: `criu check` takes
// most of a second, and a process that starts several agents (tests) need
// not pay it for each.
func ProbeOnce(ctx context.Context, path string) Info {
	if v, ok := probed.Load(path); ok {
		return v.(Info)
	}
	info := Probe(ctx, path)
	probed.Store(path, info)
	return info
}

// ParseVersion reads "Version: 4.2" from `criu --version`; "" if absent.
func ParseVersion(out []byte) string {
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "Version:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func lastLine(out []byte) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// Stdio is the pipes a task's stdout and stderr were when it was dumped,
// as /proc/<pid>/fd names ("pipe:[1234]"); empty when not a pipe.
type Stdio struct {
	Stdout string `json:"stdout,omitempty"`
	Stderr string `json:"stderr,omitempty"`
	// Status is the pipe a namespaced task's init reports the task's end
	// on (its fd 4, to the shim); empty for a task without an init.
	Status string `json:"status,omitempty"`
}

// StatusFD is the init's status pipe in a namespaced task (Stdio.Status).
const StatusFD = 4

// ReadStdio reads the task's fd 1 and 2 from procRoot (default /proc).
func ReadStdio(procRoot string, pid int) Stdio {
	return Stdio{Stdout: ReadFD(procRoot, pid, 1), Stderr: ReadFD(procRoot, pid, 2)}
}

// ReadFD names the pipe pid's fd is ("pipe:[1234]"), read from procRoot
// (default /proc); "" when it is not a pipe.
func ReadFD(procRoot string, pid, fd int) string {
	if procRoot == "" {
		procRoot = "/proc"
	}
	l, err := os.Readlink(filepath.Join(procRoot, strconv.Itoa(pid), "fd", strconv.Itoa(fd)))
	if err != nil || !strings.HasPrefix(l, "pipe:[") {
		return ""
	}
	return l
}

// DumpLog and RestoreLog are criu's own logs, inside the image directory.
const (
	DumpLog    = "dump.log"
	RestoreLog = "restore.log"
	PidFile    = "restored.pid"
	StdioFile  = "stdio.json"
)

// DumpArgs is the command line that dumps pid's process tree into dir.
// With leaveRunning the tree goes on after the dump (a checkpoint);
// without it criu kills the tree once the image is complete (a migration).
// The task runs in a session the shim leads (--shell-job), and its cgroups
// are the driver's business, not criu's (--manage-cgroups=ignore).
func DumpArgs(criuPath string, pid int, dir string, leaveRunning bool) []string {
	args := []string{criuPath, "dump", "--tree", strconv.Itoa(pid), "--images-dir", dir,
		"--shell-job", "--manage-cgroups=ignore", "--file-locks",
		"--log-file", DumpLog, "-v2"}
	if leaveRunning {
		args = append(args, "--leave-running")
	}
	return args
}

// RestoreArgs is the command line that restores the tree in dir, detached
// (it becomes the child of the nearest subreaper: the shim) and, with
// leaveStopped, stopped until the agent resumes it. Whatever pipes the
// task's stdout and stderr were are replaced by criu's own fd 1 and 2.
func RestoreArgs(criuPath, dir string, stdio Stdio, leaveStopped bool) []string {
	args := []string{criuPath, "restore", "--images-dir", dir,
		"--shell-job", "--manage-cgroups=ignore", "--file-locks", "--restore-detached",
		"--pidfile", filepath.Join(dir, PidFile),
		"--log-file", RestoreLog, "-v2"}
	if leaveStopped {
		args = append(args, "--leave-stopped")
	}
	return append(args, inheritArgs(stdio)...)
}

// DumpTreeArgs is the command line that dumps a namespaced task: the tree
// under its init (initPID, the root of the task's pid, mount, uts, ipc and
// cgroup namespaces, its own session), with those namespaces, and with the
// mounts externals names (--external mnt[point]:key pairs) as external:
// their content stays on the node, the image holds only their keys.
func DumpTreeArgs(criuPath string, initPID int, dir string, leaveRunning bool, externals []string) []string {
	args := []string{criuPath, "dump", "--tree", strconv.Itoa(initPID), "--images-dir", dir,
		"--manage-cgroups=ignore", "--file-locks",
		"--log-file", DumpLog, "-v2"}
	if leaveRunning {
		args = append(args, "--leave-running")
	}
	return append(args, externals...)
}

// RestoreTreeArgs is the command line that restores a tree dumped with
// DumpTreeArgs: in new namespaces, with the host's root as the root of the
// mount namespace (--root /) and the external mounts bound from the paths
// externals names (--external mnt[key]:path pairs). The init's status pipe
// is replaced by criu's fd StatusFD, its stdout and stderr by criu's 1 and
// 2; the restorer's cgroups and cgroup namespace become the tree's.
func RestoreTreeArgs(criuPath, dir string, stdio Stdio, leaveStopped bool, externals []string) []string {
	args := []string{criuPath, "restore", "--images-dir", dir, "--root", "/",
		"--manage-cgroups=ignore", "--file-locks", "--restore-detached",
		"--pidfile", filepath.Join(dir, PidFile),
		"--log-file", RestoreLog, "-v2"}
	if leaveStopped {
		args = append(args, "--leave-stopped")
	}
	args = append(args, inheritArgs(stdio)...)
	if stdio.Status != "" {
		args = append(args, "--inherit-fd", "fd["+strconv.Itoa(StatusFD)+"]:"+stdio.Status)
	}
	return append(args, externals...)
}

func inheritArgs(stdio Stdio) []string {
	var args []string
	if stdio.Stdout != "" {
		args = append(args, "--inherit-fd", "fd[1]:"+stdio.Stdout)
	}
	if stdio.Stderr != "" && stdio.Stderr != stdio.Stdout {
		args = append(args, "--inherit-fd", "fd[2]:"+stdio.Stderr)
	}
	return args
}

// ErrorTail returns the error lines of a criu log in dir, for messages
// (criu explains its failures there, not on stderr): all of them up to
// three, else the first two and the last.
func ErrorTail(dir, log string) string {
	data, err := os.ReadFile(filepath.Join(dir, log))
	if err != nil {
		return ""
	}
	var errs []string
	for _, line := range bytes.Split(data, []byte("\n")) {
		if bytes.Contains(line, []byte("Error (")) {
			errs = append(errs, strings.TrimSpace(string(line)))
		}
	}
	// The first errors are the cause ("Head magic doesn't match for
	// core-1.img"); the last says how it ended ("Restoring FAILED").
	if len(errs) > 3 {
		errs = []string{errs[0], errs[1], "…", errs[len(errs)-1]}
	}
	return strings.Join(errs, "; ")
}

// Run runs argv (a criu command line) with dir as its working directory
// and returns an error naming criu's own explanation from log.
func Run(ctx context.Context, argv []string, dir, log string) error {
	cmd := osexec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		why := ErrorTail(dir, log)
		if why == "" {
			why = lastLine(out)
		}
		return fmt.Errorf("%s %s: %v: %s", filepath.Base(argv[0]), argv[1], err, why)
	}
	return nil
}

// DirSize is the total size of the regular files under dir.
func DirSize(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			fi, err := d.Info()
			if err != nil {
				return err
			}
			n += fi.Size()
		}
		return nil
	})
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	return n, err
}

// probeDumpTimeout bounds ProbeDump.
const probeDumpTimeout = 20 * time.Second

// ProbeDump dumps, leaving it running, a sleeping process of uid and gid
// in a session of its own — a task as a move would dump one — and says
// why criu could not; "" when it could. `criu check` passing is not
// enough: on a host that withholds CAP_SYS_RESOURCE from the agent (some
// containers and VMs), criu cannot read another user's process's rlimits
// (`Can't get rlimit 0: Operation not permitted`) and every dump of a
// non-root task fails.
func ProbeDump(ctx context.Context, criuPath string, uid, gid int) string {
	sleep, err := osexec.LookPath("sleep")
	if err != nil {
		return "no sleep command to dump: " + err.Error()
	}
	ctx, cancel := context.WithTimeout(ctx, probeDumpTimeout)
	defer cancel()
	proc := osexec.Command(sleep, "60")
	proc.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	if err := proc.Start(); err != nil {
		return fmt.Sprintf("start a process of uid %d to dump: %v", uid, err)
	}
	defer func() {
		proc.Process.Kill()
		proc.Wait()
	}()
	dir, err := os.MkdirTemp("", "strata-criu-probe-")
	if err != nil {
		return err.Error()
	}
	defer os.RemoveAll(dir)
	if err := Run(ctx, DumpArgs(criuPath, proc.Process.Pid, dir, true), dir, DumpLog); err != nil {
		return fmt.Sprintf("criu cannot dump a task of uid %d here: %v", uid, err)
	}
	return ""
}

var dumpProbed sync.Map // "path uid gid" -> reason

// ProbeDumpOnce is ProbeDump, run once per criu path and user in a process
// (agents of one test process share it).
func ProbeDumpOnce(ctx context.Context, criuPath string, uid, gid int) string {
	key := fmt.Sprintf("%s %d %d", criuPath, uid, gid)
	if v, ok := dumpProbed.Load(key); ok {
		return v.(string)
	}
	why := ProbeDump(ctx, criuPath, uid, gid)
	dumpProbed.Store(key, why)
	return why
}
