package containerd

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/containerd/containerd/api/types/runc/options"
	"github.com/containerd/containerd/v2/core/containers"
	"github.com/containerd/containerd/v2/pkg/oci"
	"github.com/containerd/errdefs"
	specs "github.com/opencontainers/runtime-spec/specs-go"

	client "github.com/containerd/containerd/v2/client"

	"github.com/strata-dev/strata/internal/agent/cgroup"
	"github.com/strata-dev/strata/internal/agent/criu"
	"github.com/strata-dev/strata/internal/agent/drivers"
	"github.com/strata-dev/strata/internal/agent/drivers/taskfile"
	"github.com/strata-dev/strata/internal/agent/mountinfo"
)

// Checkpoints of containers go through containerd: the task service's
// Checkpoint writes runc's criu image straight into a directory of the
// agent's (runc options ImagePath), and a new task created with
// CriuImagePath restores from it when it starts. runc knows the
// container's namespaces, mounts and cgroups, so a container keeps its
// isolation across a move, unlike an exec task (docs/migration.md).
//
// Three things the daemon does not offer are built here:
//   - the criu to use: the shim runs runc with no --criu, so runc would
//     find whatever criu is on the daemon's PATH. Every container the
//     driver creates runs runc through a wrapper script that passes the
//     criu the agent checked (writeRuncWrapper).
//   - restoring stopped: containerd has no such option, but runc hands
//     criu the configuration file named by the container's
//     org.criu.config annotation, which overrides what runc asks for. The
//     driver points it at a file in the task directory and writes
//     "leave-stopped" there for the restore only (withCriuConfig).
//   - the root filesystem's changes are not carried: the target makes a
//     new snapshot of the same image. A task whose open files live only in
//     its container's writable layer fails to restore there, and the move
//     is aborted (the task goes on at the source).

// criuConfigName is the criu configuration file in a task's directory
// that the container's org.criu.config annotation names.
const criuConfigName = "criu.conf"

// runcWrapperName is the wrapper script in Config.StateDir.
const runcWrapperName = "runc-with-criu"

// dumpTimeout bounds one checkpoint; restoreTimeout one restore.
const (
	dumpTimeout    = 5 * time.Minute
	restoreTimeout = 5 * time.Minute
)

// writeRuncWrapper writes the script that runs runc with criuPath and
// returns the runc options that make containerd's shim use it.
func writeRuncWrapper(stateDir, criuPath string) (*options.Options, error) {
	if stateDir == "" {
		return nil, errors.New("no state directory for the runc wrapper")
	}
	runc, err := osexec.LookPath("runc")
	if err != nil {
		return nil, fmt.Errorf("runc not on the agent's PATH: %w", err)
	}
	if runc, err = filepath.Abs(runc); err != nil {
		return nil, err
	}
	for _, p := range []string{runc, criuPath} {
		if strings.ContainsAny(p, "'\n") {
			return nil, fmt.Errorf("path %q cannot be quoted for the runc wrapper", p)
		}
	}
	if err := os.MkdirAll(stateDir, 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(stateDir, runcWrapperName)
	script := fmt.Sprintf("#!/bin/sh\n# Written by the strata agent: runc with the criu the agent checked.\nexec '%s' --criu '%s' \"$@\"\n", runc, criuPath)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(script), 0o755); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, path); err != nil {
		return nil, err
	}
	// Every container runs runc through it: one that cannot run (a data
	// dir mounted noexec) must not break starts, only checkpoints.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if out, err := osexec.CommandContext(ctx, path, "--version").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("the runc wrapper %s does not run: %v: %s", path, err, strings.TrimSpace(string(out)))
	}
	return &options.Options{BinaryName: path}, nil
}

// withCriuConfig names <taskDir>/criu.conf as the container's criu
// configuration file. The file does not exist but while a restore runs.
func withCriuConfig(taskDir string) oci.SpecOpts {
	return func(_ context.Context, _ oci.Client, _ *containers.Container, s *oci.Spec) error {
		if s.Annotations == nil {
			s.Annotations = map[string]string{}
		}
		s.Annotations["org.criu.config"] = filepath.Join(taskDir, criuConfigName)
		return nil
	}
}

// CanCheckpoint reports whether the driver checkpoints containers: it has
// a working criu and the runc wrapper.
func (d *Driver) CanCheckpoint() bool { return d.cfg.CriuPath != "" && d.runtimeOpts != nil }

// KeepsMemory: runc dumps a container with its namespaces, so every
// container this driver checkpoints keeps its memory across a move.
func (d *Driver) KeepsMemory() bool { return d.CanCheckpoint() }

// withCheckpointOptions sets runc's checkpoint options: the image and work
// directory, and whether the container exits after the dump.
func withCheckpointOptions(dir string, exit bool) client.CheckpointTaskOpts {
	return func(r *client.CheckpointTaskInfo) error {
		r.Options = &options.CheckpointOptions{ImagePath: dir, WorkPath: dir, Exit: exit}
		return nil
	}
}

// CheckpointTask dumps the container's processes into dir (created
// empty). With leaveRunning the container goes on afterwards; without it
// runc's criu kills it once the image is complete and the task reports
// that exit: the caller must expect it. On failure the container keeps
// running and dir is removed.
func (d *Driver) CheckpointTask(ctx context.Context, id, dir string, leaveRunning bool) (*drivers.Checkpoint, error) {
	if !d.CanCheckpoint() {
		return nil, fmt.Errorf("checkpoint %s: no working criu for containerd's runc on this node", id)
	}
	e, err := d.lookup(id)
	if err != nil {
		return nil, err
	}
	if e.Exited() {
		return nil, fmt.Errorf("checkpoint %s: the task has ended", id)
	}
	t := e.Data
	if why := t.cannotCheckpoint(); why != "" {
		return nil, fmt.Errorf("checkpoint %s: %s", id, why)
	}
	ctx, cancel := context.WithTimeout(d.namespaced(ctx), dumpTimeout)
	defer cancel()
	ct, err := d.loadTask(ctx, t.containerID)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", id, err)
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("checkpoint %s: clear %s: %w", id, dir, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", id, err)
	}
	// criu's parasite drains the memory from inside the task: not under
	// the task's CPU quota.
	putBack, err := cgroup.LiftCPULimit(t.group)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("checkpoint %s: %w", id, err)
	}
	defer func() {
		// A dump that ended the container took its cgroup with it.
		if err := putBack(); err != nil && !errors.Is(err, os.ErrNotExist) {
			d.log.Error("checkpoint: put back the cpu limit", "task", id, "err", err)
		}
	}()
	// A criu.conf an agent died before removing would turn this dump's
	// end of the container into a stop (withCriuConfig).
	if err := removeCriuConfig(t.handle.TaskDir); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("checkpoint %s: %w", id, err)
	}
	// The layer must come along where there is one: memory restored over
	// a root file system without its changes would run on wrong files.
	upper, err := d.upperDir(ctx, t.containerID)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("checkpoint %s: find the writable layer: %w", id, err)
	}
	if err := d.writeImageRef(ctx, t.containerID, dir); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("checkpoint %s: %w", id, err)
	}
	start := time.Now()
	paused := false
	if upper != "" {
		// Frozen first, so that the layer matches the memory; the client's
		// Checkpoint neither pauses nor resumes a paused container.
		if err := ct.Pause(ctx); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("checkpoint %s: pause: %w", id, err)
		}
		paused = true
		if err := writeLayerTo(filepath.Join(dir, rwLayerFile), upper); err != nil {
			d.resumeContainer(t.containerID)
			os.RemoveAll(dir)
			return nil, fmt.Errorf("checkpoint %s: %w", id, err)
		}
	}
	if _, err := ct.Checkpoint(ctx, withCheckpointOptions(dir, !leaveRunning)); err != nil {
		why := criu.ErrorTail(dir, criu.DumpLog)
		os.RemoveAll(dir)
		if paused {
			d.resumeContainer(t.containerID)
		}
		if why == "" {
			why = err.Error()
		}
		return nil, fmt.Errorf("checkpoint %s: runc checkpoint: %s", id, why)
	}
	switch {
	case paused && leaveRunning:
		// The container goes on.
		if err := d.resumeContainer(t.containerID); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("checkpoint %s: resume after the dump: %w", id, err)
		}
	case paused:
		// runc destroys a container its dump ended; should its cgroup
		// still be frozen (v1), the killed processes could not die. Off
		// the move's critical path: the image is complete.
		d.tasks.Go(func() { d.resumeContainer(t.containerID) })
	}
	took := time.Since(start)
	size, err := criu.DirSize(dir)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", id, err)
	}
	d.log.Info("task checkpointed", "task", id, "container", t.containerID, "dir", dir, "bytes", size, "took", took, "leave_running", leaveRunning)
	return &drivers.Checkpoint{Dir: dir, Bytes: size, Duration: took}, nil
}

// cannotCheckpoint says why the task's container cannot be dumped here.
func (t *task) cannotCheckpoint() string {
	if t.hugePages {
		return "the task uses huge pages, which this driver does not checkpoint"
	}
	return ""
}

// RestoreTask runs the task cfg from the image in dir in a new container
// of its image, with the writable layer's changes the image carries (also
// on the node it was dumped on: the agent destroys a container once its
// task ended). With leaveStopped its processes stay stopped until ResumeTask.
func (d *Driver) RestoreTask(ctx context.Context, cfg *drivers.TaskConfig, dir string, leaveStopped bool) (*drivers.TaskHandle, error) {
	if !d.CanCheckpoint() {
		return nil, fmt.Errorf("restore %s: no working criu for containerd's runc on this node", cfg.ID)
	}
	if cfg.Task.Image == "" {
		return nil, fmt.Errorf("restore %s: task has no image", cfg.ID)
	}
	ctx, cancel := context.WithTimeout(d.namespaced(ctx), restoreTimeout)
	defer cancel()
	if why := drivers.FenceBeforeStart(cfg.TaskDir, cfg.Fenced); why != "" {
		return nil, fmt.Errorf("restore %s: %s", cfg.ID, why)
	}
	for _, f := range []string{fencedFile, startedFile} {
		os.Remove(filepath.Join(cfg.TaskDir, f))
	}
	if err := removeCriuConfig(cfg.TaskDir); err != nil {
		return nil, fmt.Errorf("restore %s: %w", cfg.ID, err)
	}
	img, err := d.taskImage(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("restore %s: %w", cfg.ID, err)
	}
	if err := checkImageRef(dir, img); err != nil {
		return nil, fmt.Errorf("restore %s: %w", cfg.ID, err)
	}
	id := containerID(cfg.ID)
	if old, err := d.tasks.Get(cfg.ID); err == nil {
		if !old.Exited() {
			return nil, fmt.Errorf("restore %s: the task still runs here", cfg.ID)
		}
		d.tasks.Delete(cfg.ID) // the copy the dump ended
	}
	defer d.markStarting(id)()
	// criu's restorer runs in the container's cgroup, which runc limits
	// before criu starts: under a small CPU quota a restore of 100 MiB
	// took 6–7 s instead of under one. The container is made without the
	// quota, which is set once the processes are back (putBackCPU).
	unthrottled := *cfg
	unthrottled.Resources.CPUMilli = 0
	container, rel, err := d.containerForRestore(ctx, &unthrottled, img)
	if err != nil {
		return nil, fmt.Errorf("restore %s: %w", cfg.ID, err)
	}
	if err := d.unpackLayer(ctx, container.ID(), dir); err != nil {
		d.discardContainer(id)
		return nil, fmt.Errorf("restore %s: %w", cfg.ID, err)
	}
	conf := filepath.Join(cfg.TaskDir, criuConfigName)
	if leaveStopped {
		if err := os.WriteFile(conf, []byte("leave-stopped\n"), 0o600); err != nil {
			d.discardContainer(id)
			return nil, fmt.Errorf("restore %s: %w", cfg.ID, err)
		}
	}
	tr, err := d.runTask(ctx, cfg, container, rel, []client.NewTaskOpts{client.WithRestoreImagePath(dir), client.WithRestoreWorkPath(dir)})
	// The file must not outlive the restore: a later dump would leave the
	// container stopped instead of ending it (and CheckpointTask removes
	// one an agent that died here left).
	if rerr := removeCriuConfig(cfg.TaskDir); rerr != nil {
		d.log.Error("remove the restore's criu configuration", "task", cfg.ID, "err", rerr)
	}
	if err != nil {
		// criu mounts a cgroup yard in its work directory (the image's);
		// a restore killed at its deadline leaves it mounted there.
		if uerr := unmountBelow(dir); uerr != nil {
			d.log.Error("unmount what the failed restore left", "dir", dir, "err", uerr)
		}
		why := criu.ErrorTail(dir, criu.RestoreLog)
		if why == "" {
			why = err.Error()
		}
		return nil, fmt.Errorf("restore %s: %s", cfg.ID, why)
	}
	if milli := cfg.Resources.CPUMilli; milli > 0 {
		tr.putBackCPU.Set(func() error { return d.setCPUQuota(tr.containerID, milli) })
	}
	if !leaveStopped {
		if err := d.putBackCPU(cfg.ID); err != nil {
			d.StopTask(cfg.ID, 0)
			d.DestroyTask(cfg.ID)
			return nil, fmt.Errorf("restore %s: %w", cfg.ID, err)
		}
	}
	d.log.Info("task restored", "task", cfg.ID, "container", id, "pid", tr.handle.PID, "stopped", leaveStopped)
	h := tr.handle
	return &h, nil
}

// containerForRestore makes a new container for cfg from its image,
// removing one a failed attempt may have left.
func (d *Driver) containerForRestore(ctx context.Context, cfg *drivers.TaskConfig, img client.Image) (client.Container, string, error) {
	if err := d.removeContainer(ctx, containerID(cfg.ID)); err != nil {
		return nil, "", fmt.Errorf("clear old container: %w", err)
	}
	c, rel, _, err := d.createContainer(ctx, cfg, img)
	return c, rel, err
}

// ResumeTask continues the processes of a container restored stopped.
func (d *Driver) ResumeTask(id string) error {
	e, err := d.lookup(id)
	if err != nil {
		return err
	}
	t := e.Data
	// Continue whatever happens to the quota: a committed task must run.
	// Without its quota it runs unthrottled, which is logged.
	if err := d.putBackCPU(id); err != nil {
		d.log.Error("restored container runs without its cpu quota", "task", id, "err", err)
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

// setCPUQuota sets the container's CFS quota to milli CPUs through
// containerd (runc update), as applyLimits would have in its spec.
func (d *Driver) setCPUQuota(containerID string, milli int64) error {
	ctx, cancel := context.WithTimeout(d.ctx, 30*time.Second)
	defer cancel()
	ct, err := d.loadTask(ctx, containerID)
	if err != nil {
		return err
	}
	quota := max(milli*cfsPeriod/1000, 1000)
	period := uint64(cfsPeriod)
	res := &specs.LinuxResources{CPU: &specs.LinuxCPU{Quota: &quota, Period: &period}}
	if err := ct.Update(ctx, client.WithResources(res)); err != nil {
		return fmt.Errorf("set the cpu quota: %w", err)
	}
	return nil
}

// mountsBelow lists the mount points under dir in this process's mount
// namespace, deepest first.
func mountsBelow(dir string) []string {
	entries, err := mountinfo.Read("self")
	if err != nil {
		return nil
	}
	return mountinfo.Below(entries, dir)
}

// unmountBelow detaches every mount under dir, deepest first.
func unmountBelow(dir string) error {
	var errs []error
	for _, mp := range mountsBelow(dir) {
		if err := syscall.Unmount(mp, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) {
			errs = append(errs, fmt.Errorf("unmount %s: %w", mp, err))
		}
	}
	return errors.Join(errs...)
}

// removeCriuConfig removes the task's criu.conf; not there is fine.
func removeCriuConfig(taskDir string) error {
	if err := os.Remove(filepath.Join(taskDir, criuConfigName)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", criuConfigName, err)
	}
	return nil
}

// resumeContainer thaws a container the driver paused, with a context of
// its own: the caller's may be what ended (its deadline, the agent's
// shutdown), and a container left frozen is not thawed by anyone else.
func (d *Driver) resumeContainer(containerID string) error {
	ctx, cancel := context.WithTimeout(d.ctx, 30*time.Second)
	defer cancel()
	ct, err := d.loadTask(ctx, containerID)
	if errdefs.IsNotFound(err) {
		return nil
	}
	if err == nil {
		err = ct.Resume(ctx)
	}
	if err != nil && !errdefs.IsNotFound(err) {
		d.log.Error("resume a container paused for a checkpoint", "container", containerID, "err", err)
		return err
	}
	return nil
}

// imageRefFile records, in a checkpoint image, the digest of the
// container image it was dumped from: memory and writable layer restored
// over another image (a tag moved, an archive rewritten) would run on the
// wrong files.
const imageRefFile = "container-image.json"

type imageRef struct {
	Name   string `json:"name"`
	Digest string `json:"digest"`
}

func (d *Driver) writeImageRef(ctx context.Context, containerID, dir string) error {
	c, err := d.client.LoadContainer(ctx, containerID)
	if err != nil {
		return err
	}
	img, err := c.Image(ctx)
	if err != nil {
		return fmt.Errorf("the container's image: %w", err)
	}
	return taskfile.WriteJSON(filepath.Join(dir, imageRefFile), imageRef{Name: img.Name(), Digest: img.Target().Digest.String()})
}

// checkImageRef refuses a restore onto an image other than the one the
// checkpoint in dir was dumped from. An image without the record (an
// older agent's) is taken as it is.
func checkImageRef(dir string, img client.Image) error {
	var ref imageRef
	ok, err := taskfile.ReadJSON(filepath.Join(dir, imageRefFile), &ref)
	if err != nil || !ok {
		return err
	}
	if got := img.Target().Digest.String(); got != ref.Digest {
		return fmt.Errorf("image %s is %s here but the checkpoint was dumped from %s: the image changed", ref.Name, got, ref.Digest)
	}
	return nil
}
