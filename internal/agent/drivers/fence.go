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

// FenceGoneWhy is why a fenced task stops when its lease file is gone.
const FenceGoneWhy = "the lease file is gone (the agent's data dir lost?): a fenced task does not run without its fence"

// DefaultFenceGrace is the time between SIGTERM and SIGKILL when a fenced
// task's lease file is missing and no earlier fence gave a grace.
const DefaultFenceGrace = 5 * time.Second

// FenceStep is what a fence watcher does after a look at the lease file.
type FenceStep int

const (
	FenceWait FenceStep = iota // nothing yet
	FenceTerm                  // SIGTERM the task (once)
	FenceKill                  // SIGKILL the task; the watch is over
)

// FenceWatch decides, look by look, what the watcher of a fenced task
// (exec's shim, containerd's log process) must do: a pure state machine
// over what the lease file held and the boot clock; the watcher reads
// both and signals. Its zero value is ready. Rules:
//   - a fence read replaces the last one (the agent renews it);
//   - a file that cannot be read keeps the last fence (the agent writes
//     it atomically, so that is a transient error at worst);
//   - a missing file means the fence is reached now (the data dir was
//     lost, or the task dir removed under it): SIGTERM at once, SIGKILL
//     after the grace the last fence gave (DefaultFenceGrace without
//     one), never later than the last fence's own times; and a file that
//     reappears does not lift it. A fenced task never runs without its
//     fence (issue 18, defect 4);
//   - SIGTERM waits until the task's command runs (started): before, it
//     could reach an init without its handler, and the kernel drops such
//     a signal to pid 1 of a namespace; SIGKILL does not wait.
type FenceWatch struct {
	last     LeaseFence
	known    bool // last holds a fence read or derived
	gone     bool // the file went missing: last is final
	termSent bool
}

// Observe takes one look's result (ReadLeaseFence's f, ok, err) at boot
// time now and returns the step, with the fence's reason for the task's
// log.
func (w *FenceWatch) Observe(f LeaseFence, ok bool, err error, now time.Duration, started bool) (FenceStep, string) {
	switch {
	case w.gone || err != nil:
	case ok:
		w.last, w.known = f, true
	default:
		grace, stop, kill, why := DefaultFenceGrace, now, now+DefaultFenceGrace, FenceGoneWhy
		if w.known {
			grace = max(0, w.last.KillAt-w.last.StopAt)
			stop, kill = min(w.last.StopAt, now), min(w.last.KillAt, now+grace)
			if w.last.StopAt <= now {
				why = w.last.Why // reached already: its own reason stands
			}
		}
		w.last, w.known, w.gone = LeaseFence{StopAt: stop, KillAt: kill, Why: why}, true, true
	}
	switch {
	case !w.known:
		return FenceWait, ""
	case now >= w.last.KillAt:
		return FenceKill, w.last.Why
	case now >= w.last.StopAt && started && !w.termSent:
		w.termSent = true
		return FenceTerm, w.last.Why
	}
	return FenceWait, ""
}

// FenceBeforeStart says why a task must not start: its fence has reached
// its stop time (the lease may be over and the copy the fence protects
// against may run elsewhere), or it is fenced and its lease file is
// missing. Empty: start it. fenced is TaskConfig.Fenced.
func FenceBeforeStart(taskDir string, fenced bool) string {
	f, ok, err := ReadLeaseFence(taskDir)
	switch {
	case err != nil:
		return ""
	case !ok && fenced:
		return "not started: " + FenceGoneWhy
	case !ok || BootClock() < f.StopAt:
		return ""
	}
	return fmt.Sprintf("not started: the lease fence was reached before the task could start (%s)", f.Why)
}

// FenceTick is how often a watcher looks at a fenced task's lease file.
// The agent's fence leaves lease.DefaultMargin (250 ms) before the lease
// can end, so a 50 ms tick keeps the stop well inside it.
const FenceTick = 50 * time.Millisecond

// WatchFence is the fence watch of every driver's watcher (exec's shim,
// containerd's log process, the micro-VM's shim): it looks at the task's
// lease file at once, every FenceTick and whenever wake fires (nil:
// never), lets FenceWatch decide, and has signal do each step (FenceTerm,
// FenceKill) with the fence's reason. started reports whether the task's
// command runs (SIGTERM waits for it). It returns once done is closed or
// the task was killed; at once for a task that is not fenced and has no
// lease file.
func WatchFence(taskDir string, fenced bool, started func() bool, wake, done <-chan struct{}, signal func(FenceStep, string)) {
	if _, ok, _ := ReadLeaseFence(taskDir); !ok && !fenced {
		return
	}
	tick := time.NewTicker(FenceTick)
	defer tick.Stop()
	var w FenceWatch
	for {
		f, ok, err := ReadLeaseFence(taskDir)
		step, why := w.Observe(f, ok, err, BootClock(), started())
		if step != FenceWait {
			signal(step, why)
		}
		if step == FenceKill {
			return
		}
		select {
		case <-done:
			return
		case <-wake:
			wake = nil // a closed channel once: a nil channel never fires again
		case <-tick.C:
		}
	}
}

// IsClosed reports, each time it is called, whether ch is closed: a
// started func for WatchFence from a channel closed once the command runs.
func IsClosed(ch <-chan struct{}) func() bool {
	return func() bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
}
