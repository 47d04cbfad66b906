package microvm

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/strata-dev/strata/internal/agent/drivers/taskfile"
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
	// Fenced: the task runs under a lease fence (drivers.TaskConfig.Fenced),
	// which the shim enforces (fence.go).
	Fenced bool `json:"fenced,omitempty"`
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

// isTaskVMM reports whether pid is a live qemu of the task in taskDir: its
// command line names the task's initramfs. Only such a process is killed.
func isTaskVMM(pid int, taskDir string) bool {
	if _, alive := taskfile.ProcStart(pid); !alive {
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
