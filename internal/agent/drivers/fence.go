package drivers

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// LeaseFile, in a task's directory, holds its LeaseFence. The agent writes
// it before it starts the task and after every lease renewal; the exec
// driver's shim reads it and stops the task when the fence is reached,
// even while the agent itself is stopped, frozen or cut off.
const LeaseFile = "lease.json"

// LeaseFence is when a task must stop, on the host's boot clock
// (CLOCK_BOOTTIME, shared by every process of the host and running through
// suspend): SIGTERM at StopAt, SIGKILL at KillAt.
type LeaseFence struct {
	StopAt time.Duration `json:"stopAtBootNs"`
	KillAt time.Duration `json:"killAtBootNs"`
	// Why is put in the task's exit message.
	Why string `json:"why"`
}

// BootClock reads CLOCK_BOOTTIME.
func BootClock() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		panic(fmt.Sprintf("clock_gettime(CLOCK_BOOTTIME): %v", err)) // Linux ≥ 2.6.39 has it
	}
	return time.Duration(ts.Nano())
}

// WriteLeaseFence replaces taskDir's lease file atomically.
func WriteLeaseFence(taskDir string, f LeaseFence) error {
	data, err := json.Marshal(f)
	if err != nil {
		return err
	}
	// A temporary file of its own: a renewal and a task start may write
	// the same task's fence at once.
	tmp, err := os.CreateTemp(taskDir, LeaseFile+".*.tmp")
	if err != nil {
		return fmt.Errorf("write lease fence: %w", err)
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write lease fence: %w", err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(taskDir, LeaseFile)); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write lease fence: %w", err)
	}
	return nil
}

// ReadLeaseFence reads taskDir's lease file; ok is false when there is
// none (the task is not fenced).
func ReadLeaseFence(taskDir string) (f LeaseFence, ok bool, err error) {
	data, err := os.ReadFile(filepath.Join(taskDir, LeaseFile))
	if errors.Is(err, os.ErrNotExist) {
		return LeaseFence{}, false, nil
	}
	if err != nil {
		return LeaseFence{}, false, err
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return LeaseFence{}, false, fmt.Errorf("lease fence: %w", err)
	}
	return f, true, nil
}
