package containerd

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/strata-dev/strata/internal/agent/logs"
)

// logConfigFile, in the task directory, tells LogMain how to rotate.
const logConfigFile = "containerd-log.json"

// logErrFile, in the task directory, receives the log process's own
// messages (fence actions, errors).
const logErrFile = "containerd-log.err"

type logConfig struct {
	MaxBytes int64 `json:"maxBytes"`
	MaxFiles int   `json:"maxFiles"`
	// The container's cgroup, for the lease fence (fence.go).
	CgroupVersion int    `json:"cgroupVersion"`
	CgroupRoot    string `json:"cgroupRoot"`
	CgroupRel     string `json:"cgroupRel"`
	// Fenced: the task runs under a lease fence (drivers.TaskConfig.Fenced).
	Fenced bool `json:"fenced,omitempty"`
}

func writeLogConfig(taskDir string, c logConfig) error {
	data, err := json.Marshal(c)
	if err != nil {
		return err
	}
	tmp := filepath.Join(taskDir, logConfigFile+".tmp")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", logConfigFile, err)
	}
	return os.Rename(tmp, filepath.Join(taskDir, logConfigFile))
}

// drainGrace bounds how long LogMain keeps reading after the shim asked it
// to stop: the shim closes its ends of the pipes first, so what is left is
// only what the kernel still buffers.
const drainGrace = 5 * time.Second

// LogMain is `strata __containerd-log <taskdir>`, the logging process
// containerd's shim starts for each task (the "binary://" log URI): fd 3
// is the task's stdout, fd 4 its stderr, and closing fd 5 tells the shim
// that it is ready. It copies both streams into the task directory's
// rotating stdout.log and stderr.log, the files the agent serves, until
// they end. The shim, not the agent, is its parent, so logging goes on
// while the agent restarts; for the same reason it is the one that
// enforces a fenced task's lease (fence.go).
func LogMain(args []string) int {
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: strata __containerd-log <taskdir> (started by containerd's shim)")
		return 2
	}
	taskDir := args[0]
	// The shim gives this process no stderr: its own messages go to a file
	// beside the logs.
	if f, err := os.OpenFile(filepath.Join(taskDir, logErrFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644); err == nil {
		os.Stderr = f
	}
	var cfg logConfig
	if data, err := os.ReadFile(filepath.Join(taskDir, logConfigFile)); err == nil {
		json.Unmarshal(data, &cfg)
	}
	stdout, stderr, ready := os.NewFile(3, "stdout"), os.NewFile(4, "stderr"), os.NewFile(5, "ready")
	if stdout == nil || stderr == nil || ready == nil {
		fmt.Fprintln(os.Stderr, "strata __containerd-log: fds 3, 4 and 5 must be open")
		return 2
	}
	// SIGTERM from the shim means "your input is closed; finish": keep
	// copying until EOF or the grace, then leave.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	var wg sync.WaitGroup
	failed := false
	for _, s := range []struct {
		name string
		r    *os.File
	}{{"stdout", stdout}, {"stderr", stderr}} {
		w, err := logs.NewWriter(taskDir, s.name, cfg.MaxBytes, cfg.MaxFiles)
		if err != nil {
			fmt.Fprintf(os.Stderr, "strata __containerd-log: %v\n", err)
			failed = true
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer w.Close()
			io.Copy(w, s.r)
		}()
	}
	ready.Close()
	drained := make(chan struct{})
	go func() { wg.Wait(); close(drained) }()
	go fenceWatch(taskDir, cfg, drained)
	select {
	case <-drained:
	case <-sigs:
		select {
		case <-drained:
		case <-time.After(drainGrace):
		}
	}
	if failed {
		return 1
	}
	return 0
}
