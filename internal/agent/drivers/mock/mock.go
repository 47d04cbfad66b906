// Package mock is an in-process task driver for tests and the simulator: a
// task "runs" for MOCK_RUN_FOR (a Go duration; unset means until stopped)
// and then exits with MOCK_EXIT_CODE, or reports an OOM kill when
// MOCK_OOM=true. MOCK_START_ERROR makes the start fail with that message,
// and MOCK_STDOUT is written to the task's stdout.log.
//
// It never starts a process or touches cgroups. Its tasks live only as long
// as the Driver value, so re-attaching works only with the same Driver.
package mock

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/strata-dev/strata/internal/agent/drivers"
)

// Name is the driver's name in Task.Driver.
const Name = "mock"

// Driver runs fake tasks. It is safe for concurrent use.
type Driver struct {
	tasks *drivers.Table[*task]

	mu sync.Mutex
	// starts counts StartTask calls per task id, for tests.
	starts map[string]int
}

type task struct {
	stop chan struct{}
	once sync.Once
}

var (
	_ drivers.Driver = (*Driver)(nil)
	_ drivers.Closer = (*Driver)(nil)
)

// New returns an empty mock driver.
func New() *Driver {
	return &Driver{tasks: drivers.NewTable[*task](), starts: map[string]int{}}
}

// Close ends the fake tasks' goroutines; their tasks are gone with them
// (a mock task lives only as long as its Driver).
func (d *Driver) Close() error {
	d.tasks.Close()
	return nil
}

// StartTask starts a fake task configured by its environment.
func (d *Driver) StartTask(_ context.Context, cfg *drivers.TaskConfig) (*drivers.TaskHandle, error) {
	env := cfg.Env
	if msg := env["MOCK_START_ERROR"]; msg != "" {
		return nil, fmt.Errorf("start %s: %s", cfg.ID, msg)
	}
	var runFor time.Duration = -1
	if s := env["MOCK_RUN_FOR"]; s != "" {
		v, err := time.ParseDuration(s)
		if err != nil {
			return nil, fmt.Errorf("start %s: MOCK_RUN_FOR: %w", cfg.ID, err)
		}
		runFor = v
	}
	code := 0
	if s := env["MOCK_EXIT_CODE"]; s != "" {
		v, err := strconv.Atoi(s)
		if err != nil {
			return nil, fmt.Errorf("start %s: MOCK_EXIT_CODE: %w", cfg.ID, err)
		}
		code = v
	}
	if out := env["MOCK_STDOUT"]; out != "" && cfg.TaskDir != "" {
		f, err := os.OpenFile(filepath.Join(cfg.TaskDir, "stdout.log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return nil, fmt.Errorf("start %s: %w", cfg.ID, err)
		}
		_, err = f.WriteString(out)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("start %s: %w", cfg.ID, err)
		}
	}
	h := drivers.TaskHandle{ID: cfg.ID, Driver: Name, TaskDir: cfg.TaskDir, StartedAt: time.Now()}
	t := &task{stop: make(chan struct{})}
	e := d.tasks.Put(cfg.ID, t)
	d.mu.Lock()
	d.starts[cfg.ID]++
	d.mu.Unlock()
	oom := env["MOCK_OOM"] == "true"
	memory := cfg.Resources.MemoryBytes
	d.tasks.Go(func() {
		var timer <-chan time.Time
		if runFor >= 0 {
			timer = time.After(runFor)
		}
		var res *drivers.ExitResult
		select {
		case <-timer:
			res = &drivers.ExitResult{ExitCode: code, OOMKilled: oom, MemoryMax: memory}
			if oom {
				res.Signal, res.ExitCode = int(syscall.SIGKILL), 137
			}
		case <-t.stop:
			res = &drivers.ExitResult{Signal: int(syscall.SIGTERM), ExitCode: 143}
		case <-d.tasks.Closed():
			return
		}
		res.FinishedAt = time.Now()
		e.Exit(res)
	})
	return &h, nil
}

// Starts reports how many times the task id was started.
func (d *Driver) Starts(id string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.starts[id]
}

// RecoverTask succeeds only for tasks this Driver value started.
func (d *Driver) RecoverTask(h *drivers.TaskHandle) error {
	_, err := d.tasks.Get(h.ID)
	return err
}

// WaitTask blocks until the fake task ends or ctx is done.
func (d *Driver) WaitTask(ctx context.Context, id string) (*drivers.ExitResult, error) {
	return d.tasks.Wait(ctx, id)
}

// StopTask ends the fake task as if it obeyed SIGTERM.
func (d *Driver) StopTask(id string, _ time.Duration) error {
	e, err := d.tasks.Get(id)
	if err != nil {
		return err
	}
	e.Data.once.Do(func() { close(e.Data.stop) })
	select {
	case <-e.Done():
	case <-d.tasks.Closed():
	}
	return nil
}

// DestroyTask forgets the task.
func (d *Driver) DestroyTask(id string) error {
	d.tasks.Delete(id)
	return nil
}
