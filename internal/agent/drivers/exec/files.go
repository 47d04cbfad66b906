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
	// RestorePidFile is set when Command restores a checkpoint (criu
	// restore --restore-detached) instead of running the task: once it
	// succeeds, the file names the restored task, which the shim, as
	// subreaper, inherits and waits for.
	RestorePidFile string `json:"restorePidFile,omitempty"`
}

// runInfo is the shim's report that the task started.
type runInfo struct {
	PID       int       `json:"pid"`
	StartedAt time.Time `json:"startedAt"`
}

// writeJSONAtomic writes v to path through a temporary file and a rename so
// that a reader sees either nothing or the whole file.
func writeJSONAtomic(path string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
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
