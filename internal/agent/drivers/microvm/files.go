package microvm

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Files in a task directory.
const (
	specFile   = "microvm.json" // what the shim runs, written by the driver
	runFile    = "run.json"     // qemu's pid, written by the shim once started
	bootFile   = "boot.json"    // when the guest reached userspace
	exitFile   = "exit.json"    // how the task ended, written by the shim last
	shimLog    = "shim.log"     // the shim's own stderr
	initrdFile = "initrd.cpio"  // the task's initramfs; removed on destroy
)

// shimSpec is what the driver hands to the shim.
type shimSpec struct {
	QEMUArgv     []string      `json:"qemuArgv"`
	BootedMarker string        `json:"bootedMarker"`
	ExitMarker   string        `json:"exitMarker"`
	StopLine     string        `json:"stopLine"`
	BootTimeout  time.Duration `json:"bootTimeout"`
	LogMaxBytes  int64         `json:"logMaxBytes"`
	LogMaxFiles  int           `json:"logMaxFiles"`
}

// runInfo is the shim's report that qemu started.
type runInfo struct {
	PID       int       `json:"pid"`
	StartedAt time.Time `json:"startedAt"`
}

// bootInfo is the shim's report that the guest's init runs.
type bootInfo struct {
	BootedAt time.Time     `json:"bootedAt"`
	Boot     time.Duration `json:"boot"` // from qemu's start
}

func newNonce() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// writeJSONAtomic writes v to path through a temporary file and a rename.
func writeJSONAtomic(path string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
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
// whether it is alive (not a zombie).
func procStart(pid int) (start uint64, alive bool) {
	if pid <= 0 {
		return 0, false
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
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

// sameProcess reports whether pid is alive and started at start.
func sameProcess(pid int, start uint64) bool {
	got, alive := procStart(pid)
	return alive && got == start
}

// isTaskVMM reports whether pid is a live qemu of the task in taskDir: its
// command line names the task's initramfs. Only such a process is killed.
func isTaskVMM(pid int, taskDir string) bool {
	if _, alive := procStart(pid); !alive {
		return false
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return false
	}
	want := filepath.Join(taskDir, initrdFile)
	for _, arg := range strings.Split(string(data), "\x00") {
		if arg == want {
			return true
		}
	}
	return false
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
