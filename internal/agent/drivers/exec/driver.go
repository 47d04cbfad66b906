package exec

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/strata-dev/strata/internal/agent/cgroup"
	"github.com/strata-dev/strata/internal/agent/drivers"
	"github.com/strata-dev/strata/internal/agent/drivers/taskfile"
)

// Name is the driver's name in Task.Driver.
const Name = "exec"

// basePath is the PATH a task gets when its environment sets none.
const basePath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// Config configures the exec driver.
type Config struct {
	// ShimCommand is the argv prefix that runs the shim; the task dir is
	// appended. Its first element with "__exec" runs exec.
	ShimCommand []string
	CgroupRoot  string // default /sys/fs/cgroup
	// CgroupParent is the cgroup, relative to each hierarchy's root, under
	// which tasks get <alloc>/<task>; default cgroup.Parent. The driver
	// owns it: FindOrphans reports what it has no record of.
	CgroupParent string
	Logger       *slog.Logger
	// Poll is how often a task's files are checked for its exit (default 50ms).
	Poll time.Duration
	// StartTimeout bounds how long the shim may take to report the task's pid.
	StartTimeout time.Duration
	// AllowRootTasks lets a task run as uid 0 (still without most
	// capabilities, in its own namespaces, under seccomp). Off by default;
	// the agent's --allow-root-tasks sets it. A per-namespace ACL policy
	// is meant to narrow it further at admission.
	AllowRootTasks bool
	// TasksRoot is the directory holding every allocation's task
	// directories (the agent's <data-dir>/allocs); a task sees none of it
	// but its own directory. Default: two levels above a task's TaskDir.
	TasksRoot string
	// CriuPath is a working criu binary (criu.Probe); empty: the driver
	// cannot checkpoint or restore.
	CriuPath string
	// Checkpointable starts tasks in the host's pid, mount and cgroup
	// namespaces (still under their user, capability mask, no_new_privs
	// and seccomp profile, in their cgroups), starting in / unless they
	// set a working directory: the layout criu dumped before it could
	// dump namespaced tasks. Not needed for checkpoints any more (every
	// task keeps its memory across a move); kept for nodes that chose it
	// (docs/migration.md).
	Checkpointable bool
}

// Driver runs tasks as processes confined by cgroups, each under a shim.
type Driver struct {
	cfg     Config
	version cgroup.Version
	log     *slog.Logger

	// tasks are the tasks the driver watches, with their monitors.
	tasks *drivers.Table[*task]
	once  sync.Once
	// resizing serializes Resize (resize.go).
	resizing sync.Mutex
}

type task struct {
	handle drivers.TaskHandle
	group  cgroup.Group
	// shim is the shim this agent process started, to reap; nil for a
	// task re-attached after an agent restart (init reaps its shim).
	shim *os.Process
	// putBackCPU, set while a restored task waits for ResumeTask, puts
	// its CPU quota back (checkpoint.go).
	putBackCPU drivers.Undo
}

var (
	_ drivers.Driver       = (*Driver)(nil)
	_ drivers.Checkpointer = (*Driver)(nil)
	_ drivers.Resizer      = (*Driver)(nil)
	_ drivers.OrphanFinder = (*Driver)(nil)
	_ drivers.Closer       = (*Driver)(nil)
)

// New returns a driver for the cgroup hierarchy found under cfg.CgroupRoot.
func New(cfg Config) (*Driver, error) {
	if len(cfg.ShimCommand) == 0 {
		return nil, errors.New("exec driver: empty shim command")
	}
	if cfg.CgroupRoot == "" {
		cfg.CgroupRoot = cgroup.DefaultRoot
	}
	if cfg.CgroupParent == "" {
		cfg.CgroupParent = cgroup.Parent
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 50 * time.Millisecond
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = 30 * time.Second
	}
	v, err := cgroup.Detect(cfg.CgroupRoot)
	if err != nil {
		return nil, fmt.Errorf("exec driver: %w", err)
	}
	return &Driver{cfg: cfg, version: v, log: cfg.Logger.With("driver", Name), tasks: drivers.NewTable[*task]()}, nil
}

// CgroupVersion reports the hierarchy the driver uses.
func (d *Driver) CgroupVersion() cgroup.Version { return d.version }

// StartTask creates the task's cgroup, launches its shim and returns once
// the task process exists (or already ended).
func (d *Driver) StartTask(ctx context.Context, cfg *drivers.TaskConfig) (*drivers.TaskHandle, error) {
	if len(cfg.Task.Command) == 0 {
		return nil, fmt.Errorf("start %s: task has no command", cfg.ID)
	}
	return d.launch(ctx, cfg, nil)
}

// restoreLaunch is a criu restore that a shim runs instead of the task.
type restoreLaunch struct {
	// argv is criu's command line for the task's spec (its paths and
	// cgroups on this node).
	argv    func(s *spec) ([]string, error)
	pidFile string
	// tree: the image is a namespaced task, its init the tree's root.
	tree bool
}

// launch starts the task cfg under a new shim: its command, or with
// restore, criu restoring it from an image.
func (d *Driver) launch(ctx context.Context, cfg *drivers.TaskConfig, restore *restoreLaunch) (*drivers.TaskHandle, error) {
	if _, err := d.taskUser(cfg); err != nil {
		return nil, fmt.Errorf("start %s: %w", cfg.ID, err)
	}
	rel := cgroup.TaskRef{AllocID: cfg.AllocID, Task: cfg.Name}.Rel(d.cfg.CgroupParent)
	group, err := cgroup.Open(d.version, d.cfg.CgroupRoot, rel)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", cfg.ID, err)
	}
	// A previous attempt may have left processes or the directory behind.
	if err := group.Kill(5 * time.Second); err != nil {
		return nil, fmt.Errorf("start %s: clear old cgroup: %w", cfg.ID, err)
	}
	if err := group.Remove(); err != nil {
		return nil, fmt.Errorf("start %s: clear old cgroup: %w", cfg.ID, err)
	}
	deny, err := cgroup.DeviceRulesOf(cfg.DenyDevices)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", cfg.ID, err)
	}
	if len(deny) > 0 && !cgroup.DeviceControl(d.version, d.cfg.CgroupRoot) {
		d.log.Warn("devices not isolated: no devices hierarchy on this cgroup v1 host (docs/devices.md)",
			"task", cfg.ID, "other_devices", len(deny))
		deny = nil
	}
	lim := cgroup.Limits{
		CPUMilli:    cfg.Resources.CPUMilli,
		MemoryBytes: cfg.Resources.MemoryBytes,
		PidsLimit:   cfg.Task.PidsLimit,
		CPUs:        cfg.Cpuset(),
		NUMANode:    cfg.NUMANode,
		Mems:        cfg.Mems,
		DenyDevices: deny,

		HugePages2Mi: cfg.Resources.HugePages2Mi,
		HugePages1Gi: cfg.Resources.HugePages1Gi,
	}
	if err := group.Create(lim); err != nil {
		group.Remove()
		return nil, fmt.Errorf("start %s: %w", cfg.ID, err)
	}
	var putBackCPU func() error
	if restore != nil {
		// criu's restorer runs inside the task's processes: not under
		// the task's CPU quota; ResumeTask puts it back.
		if putBackCPU, err = cgroup.LiftCPULimit(group); err != nil {
			group.Remove()
			return nil, fmt.Errorf("start %s: %w", cfg.ID, err)
		}
	}
	for _, f := range []string{runFile, exitFile, layoutFile} {
		if err := os.Remove(filepath.Join(cfg.TaskDir, f)); err != nil && !os.IsNotExist(err) {
			return nil, fmt.Errorf("start %s: %w", cfg.ID, err)
		}
	}
	s, err := d.taskSpec(cfg, group, rel)
	if err != nil {
		group.Remove()
		return nil, fmt.Errorf("start %s: %w", cfg.ID, err)
	}
	if d.cfg.Checkpointable || restore != nil {
		s.Checkpointable = true
		s.ExecCommand = []string{d.cfg.ShimCommand[0], "__plain"}
		if cfg.Task.WorkDir == "" {
			s.WorkDir = "/" // the task dir's path differs between nodes
		}
	}
	if restore != nil {
		if s.Command, err = restore.argv(s); err != nil {
			group.Remove()
			return nil, fmt.Errorf("start %s: %w", cfg.ID, err)
		}
		s.RestorePidFile, s.RestoreTree = restore.pidFile, restore.tree
	}
	if err := taskfile.WriteJSON(filepath.Join(cfg.TaskDir, specFile), s); err != nil {
		group.Remove()
		return nil, fmt.Errorf("start %s: %w", cfg.ID, err)
	}
	shim, err := d.launchShim(cfg.TaskDir)
	if err != nil {
		group.Remove()
		return nil, fmt.Errorf("start %s: %w", cfg.ID, err)
	}
	shimPID := shim.Pid
	start, _ := taskfile.ProcStart(shimPID)
	h := drivers.TaskHandle{
		ID: cfg.ID, Driver: Name, TaskDir: cfg.TaskDir,
		ShimPID: shimPID, ShimStart: start,
		Cgroup: rel, Cgroups: group.Dirs(),
	}
	info, err := d.awaitStart(ctx, cfg.TaskDir, shimPID, start)
	if err != nil {
		// Do not leave a half-started task: the shim may still run it.
		shim.Kill()
		shim.Wait()
		group.Kill(5 * time.Second)
		group.Remove()
		return nil, fmt.Errorf("start %s: %w", cfg.ID, err)
	}
	h.PID, h.InitPID, h.StartedAt = info.PID, info.InitPID, info.StartedAt
	if h.StartedAt.IsZero() {
		h.StartedAt = time.Now()
	}
	t := d.track(h, group, shim)
	if putBackCPU != nil {
		t.putBackCPU.Set(putBackCPU)
	}
	d.log.Info("task started", "task", cfg.ID, "pid", h.PID, "shim_pid", shimPID, "cgroup", rel)
	return &h, nil
}

// launchShim starts the task's shim in a session of its own; the task's
// monitor reaps it.
func (d *Driver) launchShim(taskDir string) (*os.Process, error) {
	return taskfile.LaunchShim(append(append([]string(nil), d.cfg.ShimCommand...), taskDir), taskDir, shimLog)
}

// awaitStart waits for the shim's run.json (or, for a task that could not
// start or ended at once, its exit.json).
func (d *Driver) awaitStart(ctx context.Context, taskDir string, shimPID int, start uint64) (runInfo, error) {
	deadline := time.Now().Add(d.cfg.StartTimeout)
	for {
		var info runInfo
		ok, err := taskfile.ReadJSON(filepath.Join(taskDir, runFile), &info)
		if err != nil {
			return info, err
		}
		if ok {
			return info, nil
		}
		if exists(filepath.Join(taskDir, exitFile)) {
			return info, nil // the monitor reports how it ended
		}
		if !taskfile.SameProcess(shimPID, start) && !exists(filepath.Join(taskDir, exitFile)) {
			return info, fmt.Errorf("shim exited before starting the task (see %s)", filepath.Join(taskDir, shimLog))
		}
		if time.Now().After(deadline) {
			return info, fmt.Errorf("shim did not start the task within %s", d.cfg.StartTimeout)
		}
		select {
		case <-ctx.Done():
			return info, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func (d *Driver) track(h drivers.TaskHandle, group cgroup.Group, shim *os.Process) *task {
	t := &task{handle: h, group: group, shim: shim}
	e := d.tasks.Put(h.ID, t)
	d.tasks.Go(func() { d.monitor(e) })
	return t
}

// monitor publishes the task's result from its shim's exit.json (or the
// shim's vanishing) and reaps a shim this agent started.
func (d *Driver) monitor(e *drivers.Entry[*task]) {
	t := e.Data
	taskfile.WatchShim(taskfile.ShimWatch{ExitPath: filepath.Join(t.handle.TaskDir, exitFile),
		ShimPID: t.handle.ShimPID, ShimStart: t.handle.ShimStart, Shim: t.shim, Poll: d.cfg.Poll,
		Lost: "task shim exited without a result"}, e.Exit, d.tasks.Closed())
}

// Close stops watching tasks and waits for every goroutine of the driver;
// the tasks themselves keep running (a shim that ends afterwards is
// reaped by whoever reaps this process's children). The driver's own
// cgroup parent (not the shared default) is removed when no task cgroup is
// left in it: an agent with no tasks leaves no cgroup behind.
func (d *Driver) Close() error {
	d.tasks.Close()
	d.once.Do(func() {
		if d.cfg.CgroupParent == cgroup.Parent {
			return // shared by every driver that names no parent of its own
		}
		if g, err := cgroup.Open(d.version, d.cfg.CgroupRoot, d.cfg.CgroupParent); err == nil {
			for _, dir := range g.Dirs() {
				os.Remove(dir) // fails, as it should, while a task cgroup is inside
			}
		}
	})
	return nil
}

// RecoverTask re-attaches to a task started by an earlier agent process. A
// task whose shim has died since is recovered too: WaitTask then returns its
// exit.json, or a lost-shim result.
func (d *Driver) RecoverTask(h *drivers.TaskHandle) error {
	if d.tasks.Has(h.ID) {
		return nil
	}
	if _, err := os.Stat(h.TaskDir); err != nil {
		return fmt.Errorf("recover %s: %w", h.ID, drivers.ErrTaskNotFound)
	}
	group, err := cgroup.Open(d.version, d.cfg.CgroupRoot, h.Cgroup)
	if err != nil {
		return fmt.Errorf("recover %s: %w", h.ID, err)
	}
	d.track(*h, group, nil)
	d.log.Info("task recovered", "task", h.ID, "pid", h.PID, "shim_pid", h.ShimPID,
		"shim_alive", taskfile.SameProcess(h.ShimPID, h.ShimStart))
	return nil
}

func (d *Driver) lookup(id string) (*drivers.Entry[*task], error) { return d.tasks.Get(id) }

// WaitTask blocks until the task ends, ctx is done or the driver closes.
func (d *Driver) WaitTask(ctx context.Context, id string) (*drivers.ExitResult, error) {
	return d.tasks.Wait(ctx, id)
}

// StopTask sends SIGTERM to the task's init, which passes it to every
// process of the task's pid namespace (setsid children included), waits up
// to timeout for it to exit, then SIGKILLs the init (the kernel then kills
// the whole namespace) and everything in its cgroup. It returns once
// the shim has reported the exit.
func (d *Driver) StopTask(id string, timeout time.Duration) error {
	e, err := d.lookup(id)
	if err != nil {
		return err
	}
	t := e.Data
	if e.Exited() {
		return nil
	}
	if err := signalTask(&t.handle, syscall.SIGTERM); err != nil {
		return fmt.Errorf("stop %s: %w", id, err)
	}
	select {
	case <-e.Done():
		return nil
	case <-time.After(timeout):
	}
	d.log.Info("task ignored SIGTERM, killing", "task", id, "grace", timeout)
	signalTask(&t.handle, syscall.SIGKILL)
	if err := t.group.Kill(10 * time.Second); err != nil {
		return fmt.Errorf("stop %s: %w", id, err)
	}
	select {
	case <-e.Done():
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("stop %s: shim did not report the exit", id)
	}
}

// DestroyTask kills whatever is left in the task's cgroup, removes the
// cgroup and forgets the task. The task directory (logs) is kept.
func (d *Driver) DestroyTask(id string) error {
	e, err := d.lookup(id)
	if err != nil {
		return err
	}
	if err := e.Data.group.Kill(10 * time.Second); err != nil {
		return fmt.Errorf("destroy %s: %w", id, err)
	}
	if err := e.Data.group.Remove(); err != nil {
		return fmt.Errorf("destroy %s: %w", id, err)
	}
	d.tasks.Delete(id)
	return nil
}

func envList(env map[string]string) []string {
	out := make([]string, 0, len(env)+1)
	if _, ok := env["PATH"]; !ok {
		out = append(out, "PATH="+basePath)
	}
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// signalTask signals the init of the task's pid namespace, which forwards
// the signal to every process in it (SIGKILL ends the namespace at once).
// A handle from before namespaces (no InitPID) gets its process group
// signalled, as it was then.
func signalTask(h *drivers.TaskHandle, sig syscall.Signal) error {
	pid := h.InitPID
	if pid <= 0 {
		pid = -h.PID
	}
	if pid == 0 {
		return nil
	}
	if err := syscall.Kill(pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}
