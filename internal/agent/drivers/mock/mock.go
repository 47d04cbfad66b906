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
	"errors"
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
	mu    sync.Mutex
	tasks map[string]*task
	// Starts counts StartTask calls per task id, for tests.
	starts map[string]int
}

type task struct {
	handle drivers.TaskHandle
	stop   chan struct{}
	once   sync.Once
	done   chan struct{}
	result *drivers.ExitResult
}

// New returns an empty mock driver.
func New() *Driver {
	return &Driver{tasks: map[string]*task{}, starts: map[string]int{}}
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
	t := &task{
		handle: drivers.TaskHandle{ID: cfg.ID, Driver: Name, TaskDir: cfg.TaskDir, StartedAt: time.Now()},
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
	}
	d.mu.Lock()
	d.tasks[cfg.ID] = t
	d.starts[cfg.ID]++
	d.mu.Unlock()
	oom := env["MOCK_OOM"] == "true"
	go func() {
		var timer <-chan time.Time
		if runFor >= 0 {
			timer = time.After(runFor)
		}
		select {
		case <-timer:
			t.result = &drivers.ExitResult{ExitCode: code, OOMKilled: oom, MemoryMax: cfg.Resources.MemoryBytes}
			if oom {
				t.result.Signal, t.result.ExitCode = int(syscall.SIGKILL), 137
			}
		case <-t.stop:
			t.result = &drivers.ExitResult{Signal: int(syscall.SIGTERM), ExitCode: 143}
		}
		t.result.FinishedAt = time.Now()
		close(t.done)
	}()
	h := t.handle
	return &h, nil
}

// Starts reports how many times the task id was started.
func (d *Driver) Starts(id string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.starts[id]
}

func (d *Driver) lookup(id string) (*task, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	t, ok := d.tasks[id]
	if !ok {
		return nil, fmt.Errorf("task %s: %w", id, drivers.ErrTaskNotFound)
	}
	return t, nil
}

// RecoverTask succeeds only for tasks this Driver value started.
func (d *Driver) RecoverTask(h *drivers.TaskHandle) error {
	_, err := d.lookup(h.ID)
	return err
}

// WaitTask blocks until the fake task ends or ctx is done.
func (d *Driver) WaitTask(ctx context.Context, id string) (*drivers.ExitResult, error) {
	t, err := d.lookup(id)
	if err != nil {
		return nil, err
	}
	select {
	case <-t.done:
		r := *t.result
		return &r, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// StopTask ends the fake task as if it obeyed SIGTERM.
func (d *Driver) StopTask(id string, _ time.Duration) error {
	t, err := d.lookup(id)
	if err != nil {
		return err
	}
	t.once.Do(func() { close(t.stop) })
	<-t.done
	return nil
}

// DestroyTask forgets the task.
func (d *Driver) DestroyTask(id string) error {
	if _, err := d.lookup(id); err != nil && !errors.Is(err, drivers.ErrTaskNotFound) {
		return err
	}
	d.mu.Lock()
	delete(d.tasks, id)
	d.mu.Unlock()
	return nil
}
