// Package taskfile holds what the shim-based drivers (exec, microvm) share
// about a task directory: JSON state files written atomically and read
// back after an agent restart, and the identity of a process by its pid and
// start time, so that a pid reused by another process is never taken for
// the task's.
package taskfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// WriteJSON writes v to path through a temporary file, a sync and a rename,
// so that a reader sees either nothing or the whole file, even after a
// crash. The file is 0600: a spec holds the task's environment and secrets.
func WriteJSON(path string, v any) error {
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

// ReadJSON decodes path into v; ok is false when the file does not exist.
func ReadJSON(path string, v any) (ok bool, err error) {
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

// ProcStart returns the start time (clock ticks since boot) of pid and
// whether it is alive: a zombie or a missing /proc entry is not.
func ProcStart(pid int) (start uint64, alive bool) {
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

// SameProcess reports whether pid is alive and is the process that started
// at start (not a later process that reused the pid).
func SameProcess(pid int, start uint64) bool {
	got, alive := ProcStart(pid)
	return alive && got == start
}
