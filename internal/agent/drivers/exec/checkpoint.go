package exec

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/strata-dev/strata/internal/agent/cgroup"
	"github.com/strata-dev/strata/internal/agent/criu"
	"github.com/strata-dev/strata/internal/agent/drivers"
	"github.com/strata-dev/strata/internal/agent/drivers/taskfile"
)

// ErrNoCheckpoint is wrapped when the driver cannot checkpoint at all (no
// working criu on the node).
var ErrNoCheckpoint = errors.New("checkpoint unavailable")

// dumpTimeout bounds one criu dump; restoreTimeout one restore.
const (
	dumpTimeout    = 5 * time.Minute
	restoreTimeout = 5 * time.Minute
)

// CanCheckpoint reports whether the driver has a working criu.
func (d *Driver) CanCheckpoint() bool { return d.cfg.CriuPath != "" }

// KeepsMemory reports whether the driver's tasks keep their memory across
// a move: every task criu can dump, namespaced or checkpointable
// (Config.Checkpointable), does once the node has a working criu.
func (d *Driver) KeepsMemory() bool { return d.CanCheckpoint() }

// CheckpointTask dumps the task's process tree into dir (created empty).
// With leaveRunning the task goes on afterwards; without it criu kills the
// tree once the image is complete, and the shim reports a SIGKILL: the
// caller must expect that exit. On failure the task keeps running (criu
// resumes what it froze) and dir is removed.
func (d *Driver) CheckpointTask(ctx context.Context, id, dir string, leaveRunning bool) (*drivers.Checkpoint, error) {
	if !d.CanCheckpoint() {
		return nil, fmt.Errorf("checkpoint %s: %w: no working criu on this node", id, ErrNoCheckpoint)
	}
	e, err := d.lookup(id)
	if err != nil {
		return nil, err
	}
	if e.Exited() {
		return nil, fmt.Errorf("checkpoint %s: the task has ended", id)
	}
	t := e.Data
	if t.handle.PID <= 0 {
		return nil, fmt.Errorf("checkpoint %s: no task pid", id)
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("checkpoint %s: clear %s: %w", id, dir, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", id, err)
	}
	stdio := criu.ReadStdio("", t.handle.PID)
	argv := criu.DumpArgs(d.cfg.CriuPath, t.handle.PID, dir, leaveRunning)
	if t.handle.InitPID > 0 {
		// The whole tree under the init, with its namespaces.
		externals, err := d.dumpLayout(t, dir)
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("checkpoint %s: %w", id, err)
		}
		stdio.Status = criu.ReadFD("", t.handle.InitPID, criu.StatusFD)
		argv = criu.DumpTreeArgs(d.cfg.CriuPath, t.handle.InitPID, dir, leaveRunning, externals)
	}
	if err := taskfile.WriteJSON(filepath.Join(dir, criu.StdioFile), stdio); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("checkpoint %s: %w", id, err)
	}
	ctx, cancel := context.WithTimeout(ctx, dumpTimeout)
	defer cancel()
	// criu's parasite drains the task's memory from inside the task: not
	// under the task's CPU quota.
	putBack, err := cgroup.LiftCPULimit(t.group)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", id, err)
	}
	defer func() {
		if err := putBack(); err != nil {
			d.log.Error("checkpoint: put back the cpu limit", "task", id, "err", err)
		}
	}()
	start := time.Now()
	if err := criu.Run(ctx, argv, dir, criu.DumpLog); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("checkpoint %s: %w", id, err)
	}
	took := time.Since(start)
	size, err := criu.DirSize(dir)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", id, err)
	}
	d.log.Info("task checkpointed", "task", id, "pid", t.handle.PID, "dir", dir, "bytes", size, "took", took, "leave_running", leaveRunning)
	return &drivers.Checkpoint{Dir: dir, Bytes: size, Duration: took}, nil
}

// RestoreTask restores the task cfg from the image in dir, under a new
// shim, in a fresh cgroup with cfg's limits, like StartTask. With
// leaveStopped the restored processes stay stopped until ResumeTask. A
// namespaced task (the image has a layout) comes back in new namespaces
// under its init, so its pids need not be free here; a checkpointable
// task's pids must be (it shares the host's pid namespace;
// docs/migration.md).
func (d *Driver) RestoreTask(ctx context.Context, cfg *drivers.TaskConfig, dir string, leaveStopped bool) (*drivers.TaskHandle, error) {
	if !d.CanCheckpoint() {
		return nil, fmt.Errorf("restore %s: %w: no working criu on this node", cfg.ID, ErrNoCheckpoint)
	}
	var stdio criu.Stdio
	if ok, err := taskfile.ReadJSON(filepath.Join(dir, criu.StdioFile), &stdio); err != nil || !ok {
		return nil, fmt.Errorf("restore %s: image %s has no readable %s: %v", cfg.ID, dir, criu.StdioFile, err)
	}
	os.Remove(filepath.Join(dir, criu.PidFile))
	restore := &restoreLaunch{pidFile: filepath.Join(dir, criu.PidFile)}
	layout, err := readLayout(dir)
	if err != nil {
		return nil, fmt.Errorf("restore %s: %w", cfg.ID, err)
	}
	if layout != nil {
		restore.tree = true
		restore.argv = func(s *spec) ([]string, error) {
			externals, err := d.restoreExternals(layout, s)
			if err != nil {
				return nil, err
			}
			return criu.RestoreTreeArgs(d.cfg.CriuPath, dir, stdio, leaveStopped, externals), nil
		}
	} else {
		restore.argv = func(*spec) ([]string, error) {
			return criu.RestoreArgs(d.cfg.CriuPath, dir, stdio, leaveStopped), nil
		}
	}
	ctx, cancel := context.WithTimeout(ctx, restoreTimeout)
	defer cancel()
	h, err := d.launch(ctx, cfg, restore)
	if err != nil {
		return nil, err
	}
	if layout != nil && h.PID > 0 {
		// The restored namespace keeps the source's paths: the next
		// dump needs them, not this node's spec.
		layout.Externals = nil
		if err := taskfile.WriteJSON(filepath.Join(cfg.TaskDir, layoutFile), layout); err != nil {
			d.StopTask(cfg.ID, 0)
			d.DestroyTask(cfg.ID)
			return nil, fmt.Errorf("restore %s: %w", cfg.ID, err)
		}
	}
	if !leaveStopped {
		if err := d.putBackCPU(cfg.ID); err != nil {
			d.StopTask(cfg.ID, 0)
			d.DestroyTask(cfg.ID)
			return nil, fmt.Errorf("restore %s: %w", cfg.ID, err)
		}
	}
	if h.PID <= 0 {
		// The shim wrote exit.json instead of run.json: criu failed.
		res, werr := d.WaitTask(ctx, cfg.ID)
		d.DestroyTask(cfg.ID)
		if werr != nil {
			return nil, fmt.Errorf("restore %s: %w", cfg.ID, werr)
		}
		return nil, fmt.Errorf("restore %s: %s", cfg.ID, res.Describe())
	}
	return h, nil
}

// ResumeTask continues every process of a task restored stopped.
func (d *Driver) ResumeTask(id string) error {
	e, err := d.lookup(id)
	if err != nil {
		return err
	}
	t := e.Data
	if err := d.putBackCPU(id); err != nil {
		return fmt.Errorf("resume %s: %w", id, err)
	}
	if err := cgroup.Continue(t.group); err != nil {
		return fmt.Errorf("resume %s: %w", id, err)
	}
	return nil
}

// putBackCPU gives a restored task its CPU quota back (lifted while criu
// restored it), once.
func (d *Driver) putBackCPU(id string) error {
	e, err := d.lookup(id)
	if err != nil {
		return err
	}
	return e.Data.putBackCPU.Run()
}
