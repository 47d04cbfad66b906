package taskfile

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/strata-dev/strata/internal/agent/drivers"
)

// LaunchShim starts argv (a shim command and the task directory) in a
// session of its own, so that it survives the agent, its signals and its
// terminal; its stdout and stderr go to logName in the task directory.
// The caller reaps it (WatchShim).
func LaunchShim(argv []string, taskDir, logName string) (*os.Process, error) {
	devNull, err := os.Open(os.DevNull)
	if err != nil {
		return nil, err
	}
	defer devNull.Close()
	logFile, err := os.OpenFile(filepath.Join(taskDir, logName), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open shim log: %w", err)
	}
	defer logFile.Close()
	proc, err := os.StartProcess(argv[0], argv, &os.ProcAttr{
		Dir:   taskDir,
		Env:   os.Environ(),
		Files: []*os.File{devNull, logFile, logFile},
		Sys:   &syscall.SysProcAttr{Setsid: true},
	})
	if err != nil {
		return nil, fmt.Errorf("launch shim: %w", err)
	}
	return proc, nil
}

// ShimWatch is what WatchShim watches: a task's shim and the file it
// writes last.
type ShimWatch struct {
	ExitPath  string        // the shim's exit.json
	ShimPID   int           // the shim, by pid and start time
	ShimStart uint64        //
	Shim      *os.Process   // reaped once it ends; nil: not this process's child
	Poll      time.Duration // how often to look
	// Lost is the result's error when the shim ended without writing
	// ExitPath ("task shim exited without a result").
	Lost string
}

// WatchShim publishes the task's result through exit: the shim's exit
// file, or Lost once the shim is gone without one; then it reaps a shim
// this process started. It returns then, or when closed is closed (the
// driver closes; the task runs on).
func WatchShim(w ShimWatch, exit func(*drivers.ExitResult), closed <-chan struct{}) {
	ticker := time.NewTicker(w.Poll)
	defer ticker.Stop()
	published, shim := false, w.Shim
	for {
		alive := SameProcess(w.ShimPID, w.ShimStart)
		if !published {
			var res drivers.ExitResult
			// Read again when the shim is gone: it may have written the
			// file just before it ended.
			if ok, err := ReadJSON(w.ExitPath, &res); err == nil && ok {
				exit(&res)
				published = true
			} else if !alive {
				exit(&drivers.ExitResult{ExitCode: -1, Err: w.Lost, FinishedAt: time.Now()})
				published = true
			}
		}
		if !alive && shim != nil {
			shim.Wait() // a zombie now: reaped at once
			shim = nil
		}
		if published && shim == nil {
			return
		}
		select {
		case <-ticker.C:
		case <-closed:
			return
		}
	}
}
