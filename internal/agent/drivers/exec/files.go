package exec

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Files a shim keeps in its task directory.
const (
	specFile = "spec.json" // what to run, written by the driver
	runFile  = "run.json"  // the task's pid, written by the shim once started
	exitFile = "exit.json" // how the task ended, written by the shim last
	shimLog  = "shim.log"  // the shim's own stderr
)

// spec is what the driver hands to the shim and the shim to exec.
type spec struct {
	Command       []string `json:"command"`
	Env           []string `json:"env"`
	WorkDir       string   `json:"workDir,omitempty"`
	ExecCommand   []string `json:"execCommand"` // argv prefix of `strata __exec`
	ProcsFiles    []string `json:"procsFiles"`  // cgroup.procs files exec joins
	CgroupVersion int      `json:"cgroupVersion"`
	CgroupRoot    string   `json:"cgroupRoot"`
	CgroupRel     string   `json:"cgroupRel"`
	LogMaxBytes   int64    `json:"logMaxBytes"`
	LogMaxFiles   int      `json:"logMaxFiles"`

	// Isolation (docs/security.md, "Task isolation").
	UID        int      `json:"uid"`
	GID        int      `json:"gid"`
	SandboxDir string   `json:"sandboxDir"` // the task's own directory, owned by UID; the only one under HidePaths it sees
	HidePaths  []string `json:"hidePaths"`  // covered by an empty tmpfs in the task's mount namespace
	CgroupDirs []string `json:"cgroupDirs"` // bound read-only under CgroupRoot in the task's mount namespace
	// IsolatedNetwork gives the task a network namespace of its own, with
	// loopback only (spec network: isolated).
	IsolatedNetwork bool `json:"isolatedNetwork,omitempty"`
	// Secrets are written to a tmpfs at SandboxDir/secrets, 0400, owned by UID.
	Secrets []secretFile `json:"secrets,omitempty"`

	// Checkpointable runs the task without namespaces of its own, through
	// `strata __plain`, so that criu can dump it (checkpoint.go).
	Checkpointable bool `json:"checkpointable,omitempty"`
	// RestorePidFile is set when Command is a criu restore (with
	// --restore-detached) instead of the task: once it succeeds, the file
	// names the restored task, which the shim, as subreaper, inherits.
	RestorePidFile string `json:"restorePidFile,omitempty"`
}

// secretFile is one secret delivered as a file.
type secretFile struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// runInfo is the shim's report that the task started.
type runInfo struct {
	PID       int       `json:"pid"`               // the task's main process
	InitPID   int       `json:"initPid,omitempty"` // pid 1 of its pid namespace
	StartedAt time.Time `json:"startedAt"`
}

// writeJSONAtomic writes v to path through a temporary file and a rename so
// that a reader sees either nothing or the whole file. The file is 0600:
// spec.json holds the task's environment and secrets.
func writeJSONAtomic(path string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Chmod(0o600); err != nil { // a stale temporary file keeps its mode
		f.Close()
		return fmt.Errorf("chmod %s: %w", tmp, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("sync %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("rename %s: %w", path, err)
	}
	return nil
}

// readJSON decodes path into v; ok is false when the file does not exist.
func readJSON(path string, v any) (ok bool, err error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return false, fmt.Errorf("decode %s: %w", path, err)
	}
	return true, nil
}

// procStart returns the start time (clock ticks since boot) of pid and
// whether it is alive: a zombie or a missing /proc entry is not.
func procStart(pid int) (start uint64, alive bool) {
	if pid <= 0 {
		return 0, false
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// The command name may hold spaces and parentheses; fields after the
	// last ')' are: state(3) ppid(4) … starttime(22).
	rest := string(data)
	if i := strings.LastIndexByte(rest, ')'); i >= 0 {
		rest = rest[i+1:]
	}
	fields := strings.Fields(rest)
	if len(fields) < 20 {
		return 0, false
	}
	start, err = strconv.ParseUint(fields[19], 10, 64)
	if err != nil {
		return 0, false
	}
	return start, fields[0] != "Z" && fields[0] != "X"
}

// sameProcess reports whether pid is alive and is the process that started
// at start (not a later process that reused the pid).
func sameProcess(pid int, start uint64) bool {
	got, alive := procStart(pid)
	return alive && got == start
}
