package containerd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/containerd/containerd/api/types/runc/options"
	client "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/pkg/cio"
	"github.com/containerd/containerd/v2/pkg/namespaces"
	"github.com/containerd/containerd/v2/plugins"
	"github.com/containerd/errdefs"

	"github.com/strata-dev/strata/internal/agent/cgroup"
	"github.com/strata-dev/strata/internal/agent/drivers"
)

// Name is the driver's name in Task.Driver.
const Name = "containerd"

// DefaultNamespace is the containerd namespace the driver owns.
const DefaultNamespace = "strata"

// Config configures the containerd driver.
type Config struct {
	Socket    string // containerd's gRPC socket, e.g. /run/containerd/containerd.sock
	Namespace string // default DefaultNamespace
	// Snapshotter unpacks images and makes root filesystems; empty means
	// containerd's default (overlayfs).
	Snapshotter string
	// LogCommand is the argv that runs LogMain, default [os.Executable(),
	// "__containerd-log"]; the shim appends the task directory. Its first
	// element must be an absolute path.
	LogCommand []string
	CgroupRoot string // default /sys/fs/cgroup, for OOM counts
	// CgroupParent is where task cgroups live, <parent>/<alloc>/<task>,
	// as for the exec driver, so the agent's host reconciliation sees them.
	CgroupParent string
	// DialTimeout bounds New's check that the socket answers (default 3s).
	DialTimeout time.Duration
	// ImageGCGrace is how long an image no container uses is kept before
	// the collector removes it (default 1h); ImageGCInterval is how often
	// the collector runs (default 5m; negative: never).
	ImageGCGrace, ImageGCInterval time.Duration
	// ProgressInterval is how often pull progress is read (default 500ms).
	ProgressInterval time.Duration
	// CriuPath is the criu (≥ 4.1) the agent checked; empty: the driver
	// does not checkpoint. containerd's shim runs runc without a criu path,
	// so runc gets it through a wrapper the driver writes into StateDir
	// (checkpoint.go).
	CriuPath string
	// StateDir holds the driver's own files (the runc wrapper); required
	// with CriuPath.
	StateDir string
	// AllowRootTasks lets a container run as uid 0, as the exec driver's
	// setting of the same name; otherwise the task or its image must name
	// another user.
	AllowRootTasks bool
	Logger         *slog.Logger
	Now            func() time.Time // default time.Now
}

// Driver runs tasks as containers of a containerd daemon.
type Driver struct {
	cfg    Config
	client *client.Client
	// runtimeOpts are the runc options of every container the driver
	// creates: runc through the criu wrapper (checkpoint.go), or nil.
	runtimeOpts *options.Options
	log         *slog.Logger
	version     cgroup.Version
	noSwap      bool
	images      imageLocks

	ctx    context.Context // namespaced; cancelled by Close
	cancel context.CancelFunc

	// tasks are the containers the driver watches, with their monitors.
	tasks *drivers.Table[*task]

	mu       sync.Mutex
	starting map[string]bool // container ids StartTask is creating
	// resizing serializes Resize (resize.go).
	resizing sync.Mutex
}

type task struct {
	handle      drivers.TaskHandle
	containerID string
	group       cgroup.Group // nil when the cgroup cannot be read
	oomBefore   uint64
	memoryMax   int64
	hugePages   bool // the task has huge pages (not checkpointed)
	// putBackCPU sets the CPU quota of a task restored without it
	// (checkpoint.go).
	putBackCPU drivers.Undo
}

var (
	_ drivers.Driver       = (*Driver)(nil)
	_ drivers.Checkpointer = (*Driver)(nil)
	_ drivers.Resizer      = (*Driver)(nil)
	_ drivers.Runner       = (*Driver)(nil)
	_ drivers.Closer       = (*Driver)(nil)
)

// New connects to the daemon and returns a driver when it answers within
// DialTimeout; otherwise an error saying why (the agent then does not
// offer the driver).
func New(cfg Config) (*Driver, error) {
	if cfg.Socket == "" {
		return nil, errors.New("containerd driver: no socket configured (--containerd-socket)")
	}
	if cfg.Namespace == "" {
		cfg.Namespace = DefaultNamespace
	}
	if cfg.CgroupRoot == "" {
		cfg.CgroupRoot = cgroup.DefaultRoot
	}
	if cfg.CgroupParent == "" {
		cfg.CgroupParent = cgroup.Parent
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = 3 * time.Second
	}
	if cfg.ImageGCGrace <= 0 {
		cfg.ImageGCGrace = time.Hour
	}
	if cfg.ImageGCInterval == 0 {
		cfg.ImageGCInterval = 5 * time.Minute
	}
	if cfg.ProgressInterval <= 0 {
		cfg.ProgressInterval = 500 * time.Millisecond
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if len(cfg.LogCommand) == 0 {
		self, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("containerd driver: find own executable for the log process: %w", err)
		}
		cfg.LogCommand = []string{self, "__containerd-log"}
	}
	if len(cfg.LogCommand) != 2 || !filepath.IsAbs(cfg.LogCommand[0]) {
		return nil, fmt.Errorf("containerd driver: log command %q: want an absolute program and one argument", cfg.LogCommand)
	}
	if _, err := os.Stat(cfg.Socket); err != nil {
		return nil, fmt.Errorf("containerd driver: socket %s: %w", cfg.Socket, err)
	}
	v, err := cgroup.Detect(cfg.CgroupRoot)
	if err != nil {
		return nil, fmt.Errorf("containerd driver: %w", err)
	}
	c, err := client.New(cfg.Socket, client.WithDefaultNamespace(cfg.Namespace), client.WithTimeout(cfg.DialTimeout))
	if err != nil {
		return nil, fmt.Errorf("containerd driver: %w", err)
	}
	pingCtx, cancelPing := context.WithTimeout(context.Background(), cfg.DialTimeout)
	ver, err := c.Version(pingCtx)
	cancelPing()
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("containerd driver: %s does not answer: %w", cfg.Socket, err)
	}
	ctx, cancel := context.WithCancel(namespaces.WithNamespace(context.Background(), cfg.Namespace))
	d := &Driver{
		cfg: cfg, client: c, version: v,
		log:    cfg.Logger.With("driver", Name),
		noSwap: swapAccounted(v, cfg.CgroupRoot),
		ctx:    ctx, cancel: cancel,
		tasks: drivers.NewTable[*task](), starting: map[string]bool{},
	}
	if cfg.CriuPath != "" {
		opts, err := writeRuncWrapper(cfg.StateDir, cfg.CriuPath)
		if err != nil {
			d.log.Warn("containerd tasks cannot be checkpointed", "err", err)
			d.cfg.CriuPath = ""
		} else {
			d.runtimeOpts = opts
		}
	}
	d.log.Info("containerd driver ready", "socket", cfg.Socket, "version", ver.Version, "namespace", cfg.Namespace)
	return d, nil
}

// Run collects leftover containers and unused images every
// ImageGCInterval until ctx is done or the driver closes
// (drivers.Runner).
func (d *Driver) Run(ctx context.Context) {
	if d.cfg.ImageGCInterval <= 0 {
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(d.ctx, cancel)
	defer stop()
	d.gcLoop(namespaces.WithNamespace(ctx, d.cfg.Namespace))
}

func (d *Driver) now() time.Time { return d.cfg.Now() }

// swapAccounted reports whether the kernel counts swap in the memory
// controller, so that memory+swap can be capped at the memory limit.
func swapAccounted(v cgroup.Version, root string) bool {
	if v == cgroup.V1 {
		_, err := os.Stat(filepath.Join(root, "memory", "memory.memsw.limit_in_bytes"))
		return err == nil
	}
	_, err := os.Stat(filepath.Join(root, "memory.swap.max"))
	if err != nil {
		// The root has no swap.max; a child of it does when swap is accounted.
		_, err = os.Stat(filepath.Join(root, "init.scope", "memory.swap.max"))
	}
	return err == nil
}

// Close stops watching tasks and the collector and waits for every
// goroutine of the driver; containers keep running.
func (d *Driver) Close() error {
	d.cancel()
	d.tasks.Close()
	return d.client.Close()
}

// StartTask makes sure the image is there, creates the container and its
// task, and returns once the task's process runs.
func (d *Driver) StartTask(ctx context.Context, cfg *drivers.TaskConfig) (*drivers.TaskHandle, error) {
	if cfg.Task.Image == "" {
		return nil, fmt.Errorf("start %s: task has no image", cfg.ID)
	}
	if err := checkSecrets(cfg.Task); err != nil {
		return nil, fmt.Errorf("start %s: %w", cfg.ID, err)
	}
	ctx = namespaces.WithNamespace(ctx, d.cfg.Namespace)
	img, err := d.taskImage(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", cfg.ID, err)
	}
	id := containerID(cfg.ID)
	defer d.markStarting(id)()
	// A previous attempt (or an agent that died mid-start) may have left
	// the container behind.
	if err := d.removeContainer(ctx, id); err != nil {
		return nil, fmt.Errorf("start %s: clear old container: %w", cfg.ID, err)
	}
	if why := drivers.FenceBeforeStart(cfg.TaskDir, cfg.Fenced); why != "" {
		return nil, fmt.Errorf("start %s: %s", cfg.ID, why)
	}
	for _, f := range []string{fencedFile, startedFile} {
		os.Remove(filepath.Join(cfg.TaskDir, f))
	}
	container, rel, lim, err := d.createContainer(ctx, cfg, img)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", cfg.ID, err)
	}
	tr, err := d.runTask(ctx, cfg, container, rel, nil)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", cfg.ID, err)
	}
	d.log.Info("task started", "task", cfg.ID, "container", id, "image", cfg.Task.Image, "pid", tr.handle.PID, "limits", describeLimits(lim))
	h := tr.handle
	return &h, nil
}

// taskImage is ensureImage for the task's image, telling the task's
// progress callback.
func (d *Driver) taskImage(ctx context.Context, cfg *drivers.TaskConfig) (client.Image, error) {
	progress := cfg.Progress
	if progress == nil {
		progress = func(string) {}
	}
	return d.ensureImage(ctx, cfg.Task.Image, progress)
}

// markStarting marks container id as being made (the collector keeps its
// image) until the returned function is called.
func (d *Driver) markStarting(id string) func() {
	d.mu.Lock()
	d.starting[id] = true
	d.mu.Unlock()
	return func() {
		d.mu.Lock()
		delete(d.starting, id)
		d.mu.Unlock()
	}
}

// createContainer makes the task's container: a new snapshot of img, the
// task's spec with its cgroup under the agent's parent and its limits.
func (d *Driver) createContainer(ctx context.Context, cfg *drivers.TaskConfig, img client.Image) (client.Container, string, limits, error) {
	id := containerID(cfg.ID)
	rel := cgroup.TaskRef{AllocID: cfg.AllocID, Task: cfg.Name}.Rel(d.cfg.CgroupParent)
	if err := writeLogConfig(cfg.TaskDir, logConfig{MaxBytes: cfg.LogMaxBytes, MaxFiles: cfg.LogMaxFiles,
		CgroupVersion: int(d.version), CgroupRoot: d.cfg.CgroupRoot, CgroupRel: rel, Fenced: cfg.Fenced}); err != nil {
		return nil, "", limits{}, err
	}
	lim := limitsOf(cfg, d.noSwap)
	opts := []client.NewContainerOpts{
		client.WithImage(img),
		client.WithSnapshotter(d.cfg.Snapshotter),
		client.WithNewSnapshot(id, img),
		client.WithNewSpec(append(specOpts(cfg, img, rel, lim, d.cfg.AllowRootTasks), withCriuConfig(cfg.TaskDir))...),
		client.WithContainerLabels(map[string]string{"strata.dev/task": cfg.ID, "strata.dev/alloc": cfg.AllocID}),
	}
	if d.runtimeOpts != nil {
		opts = append(opts, client.WithRuntime(plugins.RuntimeRuncV2, d.runtimeOpts))
	}
	container, err := d.client.NewContainer(ctx, id, opts...)
	if err != nil {
		// The snapshot is made before the spec, whose user lookup reads
		// the image's /etc/passwd from it: a refused spec leaves it.
		d.client.SnapshotService(d.cfg.Snapshotter).Remove(ctx, id)
		return nil, "", limits{}, fmt.Errorf("create container: %w", err)
	}
	return container, rel, lim, nil
}

// runTask creates the container's task with the task's log process as
// its stdio, limits its huge pages, starts it (restoring it from a
// checkpoint when opts say so) and tracks it. On failure the container is
// removed.
func (d *Driver) runTask(ctx context.Context, cfg *drivers.TaskConfig, container client.Container, rel string, opts []client.NewTaskOpts) (*task, error) {
	id := container.ID()
	t, err := container.NewTask(ctx, cio.BinaryIO(d.cfg.LogCommand[0], map[string]string{d.cfg.LogCommand[1]: cfg.TaskDir}), opts...)
	if err != nil {
		d.discardContainer(id)
		return nil, fmt.Errorf("create task: %w", err)
	}
	hp := hugePageLimits(cfg)
	// A task being restored has no pid before Start; a checkpoint refuses
	// tasks with huge pages (CheckpointTask).
	if restoring := len(opts) > 0; !restoring {
		if err := cgroup.LimitHugePages(d.version, d.cfg.CgroupRoot, rel, int(t.Pid()), hp); err != nil {
			d.discardContainer(id)
			cgroup.ReleaseHugePages(d.version, d.cfg.CgroupRoot, rel)
			return nil, err
		}
	}
	tr := &task{containerID: id, hugePages: hp.HugePages2Mi > 0 || hp.HugePages1Gi > 0}
	if g, err := cgroup.Open(d.version, d.cfg.CgroupRoot, rel); err == nil {
		tr.group = g
		tr.oomBefore, _ = g.OOMKills()
	}
	// Wait before Start: an exit that comes first must not be missed.
	exitCh, err := t.Wait(d.ctx)
	if err != nil {
		d.discardContainer(id)
		return nil, fmt.Errorf("wait: %w", err)
	}
	if err := t.Start(ctx); err != nil {
		d.discardContainer(id)
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(cfg.TaskDir, startedFile), nil, 0o644); err != nil {
		d.log.Warn("cannot mark the task started; its lease fence will only kill it", "task", cfg.ID, "err", err)
	}
	tr.handle = drivers.TaskHandle{
		ID: cfg.ID, Driver: Name, TaskDir: cfg.TaskDir,
		PID: int(t.Pid()), Cgroup: rel, StartedAt: time.Now(),
	}
	if tr.group != nil {
		tr.handle.Cgroups = tr.group.Dirs()
	}
	d.track(tr, exitCh)
	return tr, nil
}

func (d *Driver) track(t *task, exitCh <-chan client.ExitStatus) {
	e := d.tasks.Put(t.handle.ID, t)
	d.tasks.Go(func() { d.monitor(e, exitCh) })
}

// monitor waits for the task's exit and publishes the result. When the
// daemon goes away the wait is taken up again until the driver closes.
func (d *Driver) monitor(e *drivers.Entry[*task], exitCh <-chan client.ExitStatus) {
	t := e.Data
	for {
		if exitCh != nil {
			select {
			case st := <-exitCh:
				if st.Error() == nil {
					d.finish(e, st)
					return
				}
				d.log.Warn("lost the wait on a task; retrying", "task", t.handle.ID, "err", st.Error())
			case <-d.ctx.Done():
				return
			}
		}
		select {
		case <-d.ctx.Done():
			return
		case <-time.After(time.Second):
		}
		var err error
		exitCh, err = d.rewait(t.containerID)
		if errors.Is(err, drivers.ErrTaskNotFound) {
			e.Exit(&drivers.ExitResult{ExitCode: -1, Err: "container task disappeared from containerd", FinishedAt: time.Now()})
			return
		}
		if err != nil {
			exitCh = nil
		}
	}
}

func (d *Driver) rewait(id string) (<-chan client.ExitStatus, error) {
	container, err := d.client.LoadContainer(d.ctx, id)
	if errdefs.IsNotFound(err) {
		return nil, drivers.ErrTaskNotFound
	}
	if err != nil {
		return nil, err
	}
	t, err := container.Task(d.ctx, nil)
	if errdefs.IsNotFound(err) {
		return nil, drivers.ErrTaskNotFound
	}
	if err != nil {
		return nil, err
	}
	return t.Wait(d.ctx)
}

// finish turns containerd's exit status into the agent's result: runc
// reports a death by signal N as 128+N; an exit with the group's OOM-kill
// counter raised is an OOM kill.
func (d *Driver) finish(e *drivers.Entry[*task], st client.ExitStatus) {
	t := e.Data
	code := int(st.ExitCode())
	res := &drivers.ExitResult{ExitCode: code, FinishedAt: st.ExitTime()}
	if code > 128 && code <= 128+64 {
		res.Signal = code - 128
	}
	if t.group != nil && code != 0 {
		if after, err := t.group.OOMKills(); err == nil && after > t.oomBefore {
			res.OOMKilled = true
			res.MemoryMax, _ = t.group.MemoryLimit()
		}
	}
	if why, ok := fencedWhy(t.handle.TaskDir); ok {
		res.Fenced = true
		d.log.Warn("task stopped at its lease fence", "task", t.handle.ID, "why", strings.TrimSpace(why))
	}
	e.Exit(res)
	d.log.Info("task exited", "task", t.handle.ID, "result", res.Describe())
}

// RecoverTask re-attaches to a container started by an earlier agent
// process. A task that exited meanwhile is recovered too: containerd keeps
// its exit status until DestroyTask deletes it.
func (d *Driver) RecoverTask(h *drivers.TaskHandle) error {
	if d.tasks.Has(h.ID) {
		return nil
	}
	id := containerID(h.ID)
	exitCh, err := d.rewait(id)
	if err != nil {
		return fmt.Errorf("recover %s: %w", h.ID, err)
	}
	t := &task{handle: *h, containerID: id}
	if g, err := cgroup.Open(d.version, d.cfg.CgroupRoot, h.Cgroup); err == nil && h.Cgroup != "" {
		// The count before start is lost with the old agent; a new
		// container cgroup starts at zero.
		t.group = g
	}
	d.track(t, exitCh)
	d.log.Info("task recovered", "task", h.ID, "container", id, "pid", h.PID)
	return nil
}

func (d *Driver) lookup(id string) (*drivers.Entry[*task], error) { return d.tasks.Get(id) }

// WaitTask blocks until the task ends, ctx is done or the driver closes.
func (d *Driver) WaitTask(ctx context.Context, id string) (*drivers.ExitResult, error) {
	return d.tasks.Wait(ctx, id)
}

// StopTask sends SIGTERM to the container's processes, waits up to
// timeout, then SIGKILLs all of them; it returns once the exit is known.
func (d *Driver) StopTask(id string, timeout time.Duration) error {
	e, err := d.lookup(id)
	if err != nil {
		return err
	}
	if e.Exited() {
		return nil
	}
	t := e.Data
	ctx := d.ctx
	ct, err := d.loadTask(ctx, t.containerID)
	if err != nil {
		return fmt.Errorf("stop %s: %w", id, err)
	}
	if err := ct.Kill(ctx, syscall.SIGTERM, client.WithKillAll); err != nil && !errdefs.IsNotFound(err) {
		return fmt.Errorf("stop %s: %w", id, err)
	}
	select {
	case <-e.Done():
		return nil
	case <-time.After(timeout):
	}
	d.log.Info("task ignored SIGTERM, killing", "task", id, "grace", timeout)
	if err := ct.Kill(ctx, syscall.SIGKILL, client.WithKillAll); err != nil && !errdefs.IsNotFound(err) {
		return fmt.Errorf("stop %s: %w", id, err)
	}
	select {
	case <-e.Done():
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("stop %s: containerd did not report the exit", id)
	}
}

func (d *Driver) loadTask(ctx context.Context, id string) (client.Task, error) {
	container, err := d.client.LoadContainer(ctx, id)
	if err != nil {
		return nil, err
	}
	return container.Task(ctx, nil)
}

// DestroyTask deletes the container's task, the container and its
// snapshot, and forgets the task. The task directory (logs) is kept; the
// image stays until the collector finds it unused for ImageGCGrace.
func (d *Driver) DestroyTask(id string) error {
	e, err := d.lookup(id)
	if err != nil {
		return err
	}
	t := e.Data
	if err := d.removeContainer(d.ctx, t.containerID); err != nil {
		return fmt.Errorf("destroy %s: %w", id, err)
	}
	if err := cgroup.ReleaseHugePages(d.version, d.cfg.CgroupRoot, t.handle.Cgroup); err != nil {
		return fmt.Errorf("destroy %s: %w", id, err)
	}
	d.tasks.Delete(id)
	return nil
}

// discardContainer removes a container a failed start or restore made,
// with a context of its own: the caller's may be what expired.
func (d *Driver) discardContainer(id string) {
	ctx, cancel := context.WithTimeout(d.ctx, 30*time.Second)
	defer cancel()
	if err := d.removeContainer(ctx, id); err != nil {
		d.log.Error("remove the container of a failed start", "container", id, "err", err)
	}
}

// removeContainer kills and deletes the container's task, then the
// container with its snapshot; a container that is not there is fine.
func (d *Driver) removeContainer(ctx context.Context, id string) error {
	container, err := d.client.LoadContainer(ctx, id)
	if errdefs.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if t, err := container.Task(ctx, nil); err == nil {
		if _, err := t.Delete(ctx, client.WithProcessKill); err != nil && !errdefs.IsNotFound(err) {
			return fmt.Errorf("delete task: %w", err)
		}
	} else if !errdefs.IsNotFound(err) {
		return fmt.Errorf("load task: %w", err)
	}
	if err := container.Delete(ctx, client.WithSnapshotCleanup); err != nil && !errdefs.IsNotFound(err) {
		return fmt.Errorf("delete container: %w", err)
	}
	return nil
}

func (d *Driver) namespaced(ctx context.Context) context.Context {
	return namespaces.WithNamespace(ctx, d.cfg.Namespace)
}
