package microvm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/strata-dev/strata/internal/agent/drivers"
	"github.com/strata-dev/strata/internal/agent/drivers/taskfile"
)

// Name is the driver's name in Task.Driver.
const Name = "microvm"

// Node labels the driver advertises. The node has no field for drivers, so
// they are free-form attributes: the scheduler's driver filter reads
// driver.<name>=1, and operators read the accelerator in `strata nodes`.
const (
	LabelDriver = "driver." + Name
	LabelAccel  = Name + ".accel"
)

// Config configures the driver. Empty fields take the documented defaults.
type Config struct {
	// ShimCommand is the argv prefix that runs the shim; the task dir is
	// appended. Default [os.Executable(), "__microvm-shim"].
	ShimCommand []string
	QEMU        string // default qemu-system-x86_64 from PATH
	Kernel      string // default /vmlinuz, else the newest /boot/vmlinuz-*
	Busybox     string // default /bin/busybox (must be static: busybox-static)
	// Accel forces "kvm" or "tcg"; "" or "auto" chooses (chooseAccel).
	Accel string
	// CPUInfo and KVMDevice override /proc/cpuinfo and /dev/kvm (tests).
	CPUInfo, KVMDevice string
	// ProbeLimit is how fast a KVM probe guest must reach userspace for
	// KVM to be used, default 5s.
	ProbeLimit time.Duration
	// BootTimeout bounds a guest's boot to userspace, default 2m under TCG
	// and 30s under KVM.
	BootTimeout time.Duration
	Logger      *slog.Logger
	Poll        time.Duration // how often exit.json is checked, default 100ms
	// StartTimeout bounds how long the shim may take to start qemu.
	StartTimeout time.Duration
}

// Driver runs each task in a qemu micro-VM under a detached shim.
type Driver struct {
	cfg  Config
	host *Host
	log  *slog.Logger

	mu     sync.Mutex
	tasks  map[string]*task
	closed chan struct{}
	once   sync.Once
}

type task struct {
	handle drivers.TaskHandle
	done   chan struct{} // closed once result is set
	result *drivers.ExitResult
}

// New finds qemu, the guest kernel and busybox, and chooses the
// accelerator. Its error wraps ErrNotAvailable when the node cannot run
// micro-VMs.
func New(cfg Config) (*Driver, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if len(cfg.ShimCommand) == 0 {
		self, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("microvm driver: find own executable for the shim: %w", err)
		}
		cfg.ShimCommand = []string{self, "__microvm-shim"}
	}
	if cfg.CPUInfo == "" {
		cfg.CPUInfo = "/proc/cpuinfo"
	}
	if cfg.KVMDevice == "" {
		cfg.KVMDevice = "/dev/kvm"
	}
	if cfg.ProbeLimit <= 0 {
		cfg.ProbeLimit = 5 * time.Second
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 100 * time.Millisecond
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = 30 * time.Second
	}
	h, err := discover(cfg)
	if err != nil {
		return nil, err
	}
	if cfg.BootTimeout <= 0 {
		cfg.BootTimeout = 2 * time.Minute
		if h.Accel == AccelKVM {
			cfg.BootTimeout = 30 * time.Second
		}
	}
	d := &Driver{cfg: cfg, host: h, log: cfg.Logger.With("driver", Name), tasks: map[string]*task{}, closed: make(chan struct{})}
	d.log.Info("micro-VM driver ready", "qemu", h.QEMU, "kernel", h.Kernel, "busybox", h.Busybox, "accel", h.Accel, "why", h.AccelReason)
	return d, nil
}

func discover(cfg Config) (*Host, error) {
	h := &Host{}
	var err error
	if h.QEMU, err = findQEMU(cfg.QEMU); err != nil {
		return nil, err
	}
	if h.Kernel, err = findKernel(cfg.Kernel); err != nil {
		return nil, err
	}
	if h.Busybox, h.busybox, err = loadBusybox(cfg.Busybox); err != nil {
		return nil, err
	}
	ci, err := readCPUInfo(cfg.CPUInfo)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotAvailable, err)
	}
	h.TSCKHz = ci.MHz * 1000
	if h.TSCKHz <= 0 {
		h.TSCKHz = defaultTSCKHz
	}
	switch cfg.Accel {
	case "", "auto":
		probe := func(limit time.Duration) (time.Duration, error) {
			return probeBoot(context.Background(), h, AccelKVM, limit)
		}
		h.Accel, h.AccelReason = chooseAccel(kvmUsable(cfg.KVMDevice), ci, probe, cfg.ProbeLimit)
	case string(AccelKVM), string(AccelTCG):
		h.Accel, h.AccelReason = Accel(cfg.Accel), "set by --microvm-accel"
	default:
		return nil, fmt.Errorf("microvm accel %q: want auto, kvm or tcg", cfg.Accel)
	}
	return h, nil
}

// Host returns what the driver found.
func (d *Driver) Host() Host { return *d.host }

// Labels are the node attributes the driver advertises.
func (d *Driver) Labels() map[string]string {
	return map[string]string{LabelDriver: "1", LabelAccel: string(d.host.Accel)}
}

// StartTask builds the task's initramfs from its image, launches its shim
// and returns once qemu runs.
func (d *Driver) StartTask(ctx context.Context, cfg *drivers.TaskConfig) (*drivers.TaskHandle, error) {
	h, err := d.start(ctx, cfg)
	if err != nil {
		os.Remove(filepath.Join(cfg.TaskDir, initrdFile))
		return nil, fmt.Errorf("start %s: %w", cfg.ID, err)
	}
	return h, nil
}

func (d *Driver) start(ctx context.Context, cfg *drivers.TaskConfig) (*drivers.TaskHandle, error) {
	if cfg.Task.Image == "" {
		return nil, errors.New("image: required for driver microvm (oci-archive:PATH or oci:DIR)")
	}
	if cfg.Resources.MemoryBytes < MinMemoryBytes {
		_, err := memoryMiBFor(cfg.Resources.MemoryBytes, 0)
		return nil, err
	}
	for _, f := range []string{runFile, bootFile, exitFile} {
		if err := os.Remove(filepath.Join(cfg.TaskDir, f)); err != nil && !os.IsNotExist(err) {
			return nil, err
		}
	}
	img, err := openImage(cfg.Task.Image)
	if err != nil {
		return nil, err
	}
	defer img.Close()
	g, err := newGuestTask(cfg.Task.Command, cfg.Task.WorkDir, cfg.Env, cfg.Task.Secrets, img.config, cfg.Name, newNonce())
	if err != nil {
		return nil, err
	}
	initrd := filepath.Join(cfg.TaskDir, initrdFile)
	size, err := buildInitrd(initrd, img, d.host.busybox, g)
	if err != nil {
		return nil, err
	}
	memMiB, err := memoryMiBFor(cfg.Resources.MemoryBytes, size)
	if err != nil {
		return nil, err
	}
	machine := vm{QEMU: d.host.QEMU, Kernel: d.host.Kernel, Initrd: initrd, Accel: d.host.Accel,
		VCPUs: vcpusFor(cfg.Resources.CPUMilli), MemoryMiB: memMiB, TSCKHz: d.host.TSCKHz}
	s := shimSpec{
		QEMUArgv: machine.argv(), BootedMarker: g.bootedMarker(), ExitMarker: g.exitMarker(), StopLine: g.stopLine(),
		BootTimeout: d.cfg.BootTimeout, LogMaxBytes: cfg.LogMaxBytes, LogMaxFiles: cfg.LogMaxFiles,
		Fenced: cfg.Fenced,
	}
	if err := taskfile.WriteJSON(filepath.Join(cfg.TaskDir, specFile), s); err != nil {
		return nil, err
	}
	shimPID, err := d.launchShim(cfg.TaskDir)
	if err != nil {
		return nil, err
	}
	shimStart, _ := taskfile.ProcStart(shimPID)
	info, err := d.awaitStart(ctx, cfg.TaskDir, shimPID, shimStart)
	if err != nil {
		syscall.Kill(shimPID, syscall.SIGKILL) // qemu follows (Pdeathsig)
		return nil, err
	}
	h := drivers.TaskHandle{ID: cfg.ID, Driver: Name, TaskDir: cfg.TaskDir, ShimPID: shimPID, ShimStart: shimStart,
		PID: info.PID, StartedAt: info.StartedAt}
	if h.StartedAt.IsZero() {
		h.StartedAt = time.Now()
	}
	d.track(h)
	d.log.Info("micro-VM started", "task", cfg.ID, "qemu_pid", h.PID, "shim_pid", shimPID, "accel", machine.Accel,
		"vcpus", machine.VCPUs, "memory_mib", machine.MemoryMiB, "initrd_bytes", size)
	return &h, nil
}

func (d *Driver) launchShim(taskDir string) (int, error) {
	devNull, err := os.Open(os.DevNull)
	if err != nil {
		return 0, err
	}
	defer devNull.Close()
	logFile, err := os.OpenFile(filepath.Join(taskDir, shimLog), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return 0, fmt.Errorf("open shim log: %w", err)
	}
	defer logFile.Close()
	argv := append(append([]string(nil), d.cfg.ShimCommand...), taskDir)
	proc, err := os.StartProcess(argv[0], argv, &os.ProcAttr{
		Dir: taskDir, Env: os.Environ(),
		Files: []*os.File{devNull, logFile, logFile},
		Sys:   &syscall.SysProcAttr{Setsid: true}, // outlives the agent
	})
	if err != nil {
		return 0, fmt.Errorf("launch shim: %w", err)
	}
	go proc.Wait() // reap it while this agent lives
	return proc.Pid, nil
}

// awaitStart waits for the shim's run.json (or exit.json when qemu could
// not start).
func (d *Driver) awaitStart(ctx context.Context, taskDir string, shimPID int, start uint64) (runInfo, error) {
	deadline := time.Now().Add(d.cfg.StartTimeout)
	for {
		var info runInfo
		ok, err := taskfile.ReadJSON(filepath.Join(taskDir, runFile), &info)
		if err != nil || ok {
			return info, err
		}
		if exists(filepath.Join(taskDir, exitFile)) {
			return info, nil // the monitor reports how it ended
		}
		if !taskfile.SameProcess(shimPID, start) {
			return info, fmt.Errorf("shim exited before starting qemu (see %s)", filepath.Join(taskDir, shimLog))
		}
		if time.Now().After(deadline) {
			return info, fmt.Errorf("shim did not start qemu within %s", d.cfg.StartTimeout)
		}
		select {
		case <-ctx.Done():
			return info, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func (d *Driver) track(h drivers.TaskHandle) {
	t := &task{handle: h, done: make(chan struct{})}
	d.mu.Lock()
	d.tasks[h.ID] = t
	d.mu.Unlock()
	go d.monitor(t)
}

// monitor waits for exit.json, or for the shim to vanish without one.
func (d *Driver) monitor(t *task) {
	exitPath := filepath.Join(t.handle.TaskDir, exitFile)
	ticker := time.NewTicker(d.cfg.Poll)
	defer ticker.Stop()
	for {
		var res drivers.ExitResult
		if ok, err := taskfile.ReadJSON(exitPath, &res); err == nil && ok {
			t.result = &res
			close(t.done)
			return
		}
		if !taskfile.SameProcess(t.handle.ShimPID, t.handle.ShimStart) {
			if ok, err := taskfile.ReadJSON(exitPath, &res); err == nil && ok {
				t.result = &res
			} else {
				t.result = &drivers.ExitResult{ExitCode: -1, Err: "micro-VM shim exited without a result", FinishedAt: time.Now()}
			}
			close(t.done)
			return
		}
		select {
		case <-ticker.C:
		case <-d.closed:
			return
		}
	}
}

// Close stops watching tasks; the VMs keep running.
func (d *Driver) Close() error {
	d.once.Do(func() { close(d.closed) })
	return nil
}

// RecoverTask re-attaches to a VM started by an earlier agent process.
func (d *Driver) RecoverTask(h *drivers.TaskHandle) error {
	d.mu.Lock()
	_, known := d.tasks[h.ID]
	d.mu.Unlock()
	if known {
		return nil
	}
	if _, err := os.Stat(h.TaskDir); err != nil {
		return fmt.Errorf("recover %s: %w", h.ID, drivers.ErrTaskNotFound)
	}
	d.track(*h)
	d.log.Info("micro-VM recovered", "task", h.ID, "qemu_pid", h.PID, "shim_alive", taskfile.SameProcess(h.ShimPID, h.ShimStart))
	return nil
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

// WaitTask blocks until the task ends or ctx is done.
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

// StopTask asks the guest to stop (the shim passes SIGTERM on to the
// guest's init, which sends SIGTERM to the command), waits up to timeout,
// then kills qemu. It returns once the shim has reported the exit.
func (d *Driver) StopTask(id string, timeout time.Duration) error {
	t, err := d.lookup(id)
	if err != nil {
		return err
	}
	select {
	case <-t.done:
		return nil
	default:
	}
	if taskfile.SameProcess(t.handle.ShimPID, t.handle.ShimStart) {
		if err := syscall.Kill(t.handle.ShimPID, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("stop %s: %w", id, err)
		}
	}
	select {
	case <-t.done:
		return nil
	case <-time.After(timeout):
	}
	d.log.Info("guest did not stop in time, killing qemu", "task", id, "grace", timeout)
	d.killVMM(t)
	select {
	case <-t.done:
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("stop %s: shim did not report the exit", id)
	}
}

// killVMM SIGKILLs the task's qemu if it is still the process started for
// this task.
func (d *Driver) killVMM(t *task) {
	if isTaskVMM(t.handle.PID, t.handle.TaskDir) {
		syscall.Kill(t.handle.PID, syscall.SIGKILL)
	}
}

// DestroyTask makes sure no VM is left, removes the task's initramfs and
// forgets the task. The logs are kept.
func (d *Driver) DestroyTask(id string) error {
	t, err := d.lookup(id)
	if err != nil {
		return err
	}
	d.killVMM(t)
	if err := os.Remove(filepath.Join(t.handle.TaskDir, initrdFile)); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("destroy %s: %w", id, err)
	}
	d.mu.Lock()
	delete(d.tasks, id)
	d.mu.Unlock()
	return nil
}
