package agent

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/drivers"
	"github.com/strata-dev/strata/internal/agent/drivers/mock"
	"github.com/strata-dev/strata/internal/agent/migrate"
)

// ckptDriver is the mock driver with a fake criu: a checkpoint for a move
// ends the task (as criu's dump does), a restore starts it again and is
// counted.
type ckptDriver struct {
	*mock.Driver
	mu       sync.Mutex
	restores int
}

func (d *ckptDriver) CanCheckpoint() bool { return true }
func (d *ckptDriver) KeepsMemory() bool   { return true }

func (d *ckptDriver) CheckpointTask(_ context.Context, id, dir string, leaveRunning bool) (*drivers.Checkpoint, error) {
	if !leaveRunning {
		d.StopTask(id, 0)
	}
	return &drivers.Checkpoint{Dir: dir, Bytes: 1}, nil
}

func (d *ckptDriver) RestoreTask(ctx context.Context, cfg *drivers.TaskConfig, dir string, _ bool) (*drivers.TaskHandle, error) {
	d.mu.Lock()
	d.restores++
	d.mu.Unlock()
	return d.StartTask(ctx, cfg)
}

func (d *ckptDriver) ResumeTask(string) error { return nil }

func (d *ckptDriver) restored() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.restores
}

// holdRig is one task runner of an "always" restart policy on ckptDriver.
type holdRig struct {
	t      *testing.T
	d      *ckptDriver
	tr     *taskRunner
	cancel context.CancelFunc
}

func newHoldRig(t *testing.T) *holdRig {
	d := &ckptDriver{Driver: mock.New()}
	cfg := drivers.TaskConfig{ID: "a1/t", AllocID: "a1", Name: "t", Task: &api.Task{Name: "t"}, Env: map[string]string{}, TaskDir: t.TempDir()}
	tr := newTaskRunner(cfg, loadedDriver(d), api.RestartPolicy{Mode: "always", Delay: time.Millisecond, MaxDelay: time.Millisecond},
		slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	tr.changed = func(*taskRunner) {}
	tr.hooks.add(holdHook{&tr.holds})
	ctx, cancel := context.WithCancel(context.Background())
	go tr.run(ctx)
	r := &holdRig{t: t, d: d, tr: tr, cancel: cancel}
	t.Cleanup(func() {
		tr.stop()
		<-tr.doneCh
		cancel()
	})
	r.waitFor("the task runs", func() bool { return tr.snapshot().State == api.TaskRunning })
	return r
}

func (r *holdRig) waitFor(what string, cond func() bool) {
	r.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			r.t.Fatalf("timed out waiting until %s (state %+v)", what, r.tr.snapshot())
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// dumped holds the task for migration m and "dumps" it (it ends), then
// waits until the runner holds its exit.
func (r *holdRig) dumped(m string) *migrate.Hold {
	r.t.Helper()
	h := r.tr.holds.Hold(m)
	r.d.CheckpointTask(context.Background(), r.tr.cfg.ID, "", false)
	r.waitFor("the runner holds the exit", func() bool {
		select {
		case <-r.tr.doneCh:
			return true
		default:
		}
		return r.d.Starts(r.tr.cfg.ID) == 1 && r.tr.holds.Held() == h && r.tr.handleGone()
	})
	return h
}

// loadedDriver is d as the node's registry offers it, capabilities found.
func loadedDriver(d Driver) *drivers.Loaded {
	set := drivers.Load(nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	set.Add("test", d)
	return set.For("test")
}

func (tr *taskRunner) handleGone() bool {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.handle == nil
}

// TestMigrationHoldVerdicts: a task whose exit a migration holds is not
// restarted by its policy; what follows is the migration's verdict alone.
func TestMigrationHoldVerdicts(t *testing.T) {
	t.Run("gone: the runner ends without a word", func(t *testing.T) {
		r := newHoldRig(t)
		h := r.dumped("m1")
		time.Sleep(20 * time.Millisecond) // well past the 1ms restart delay
		if n := r.d.Starts(r.tr.cfg.ID); n != 1 {
			t.Fatalf("a held task was started %d times", n)
		}
		h.Decide(migrate.Gone, "")
		<-r.tr.doneCh
		if st := r.tr.snapshot(); st.State != api.TaskRunning {
			t.Errorf("a task that moved away reported %+v: its allocation is another node's now", st)
		}
	})
	t.Run("restore: back from the image, not afresh", func(t *testing.T) {
		r := newHoldRig(t)
		h := r.dumped("m1")
		h.Decide(migrate.Restore, "/img")
		<-h.Settled()
		r.waitFor("the task runs again", func() bool { return r.tr.snapshot().State == api.TaskRunning && !r.tr.handleGone() })
		if r.d.restored() != 1 || r.d.Starts(r.tr.cfg.ID) != 2 {
			t.Errorf("restores %d, starts %d: want one restore (its start) and nothing else", r.d.restored(), r.d.Starts(r.tr.cfg.ID))
		}
		if st := r.tr.snapshot(); st.Restarts != 0 {
			t.Errorf("an aborted migration counted as a restart: %+v", st)
		}
	})
	t.Run("restart: afresh", func(t *testing.T) {
		r := newHoldRig(t)
		h := r.dumped("m1")
		h.Decide(migrate.Restart, "")
		r.waitFor("the task started afresh", func() bool { return r.d.Starts(r.tr.cfg.ID) == 2 && r.tr.snapshot().State == api.TaskRunning })
		if r.d.restored() != 0 {
			t.Error("restart restored")
		}
	})
	t.Run("resume: a later exit of its own follows the policy", func(t *testing.T) {
		r := newHoldRig(t)
		h := r.tr.holds.Hold("m1")
		h.Decide(migrate.Resume, "") // the dump failed: nothing ended
		r.tr.holds.Release(h)
		r.d.StopTask(r.tr.cfg.ID, 0)
		r.waitFor("the policy restarts it", func() bool { return r.d.Starts(r.tr.cfg.ID) == 2 })
	})
	t.Run("stop while held", func(t *testing.T) {
		r := newHoldRig(t)
		r.dumped("m1")
		r.tr.stop()
		<-r.tr.doneCh
		if st := r.tr.snapshot(); st.State != api.TaskDead || st.Message != "stopped" {
			t.Errorf("state %+v, want stopped", st)
		}
	})
}
