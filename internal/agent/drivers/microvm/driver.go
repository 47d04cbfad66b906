package microvm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
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

	// tasks are the VMs the driver watches, with their monitors.
	tasks *drivers.Table[*task]
}

type task struct {
	handle drivers.TaskHandle
	shim   *os.Process // reaped by the monitor; nil after an agent restart
}

var (
	_ drivers.Driver  = (*Driver)(nil)
	_ drivers.Labeler = (*Driver)(nil)
	_ drivers.Closer  = (*Driver)(nil)
)

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
	d := &Driver{cfg: cfg, host: h, log: cfg.Logger.With("driver", Name), tasks: drivers.NewTable[*task]()}
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
	shim, err := taskfile.LaunchShim(append(append([]string(nil), d.cfg.ShimCommand...), cfg.TaskDir), cfg.TaskDir, shimLog)
	if err != nil {
		return nil, err
	}
	shimPID := shim.Pid
	shimStart, _ := taskfile.ProcStart(shimPID)
	info, err := d.awaitStart(ctx, cfg.TaskDir, shimPID, shimStart)
	if err != nil {
		shim.Kill() // qemu follows (Pdeathsig)
		shim.Wait()
		return nil, err
	}
	h := drivers.TaskHandle{ID: cfg.ID, Driver: Name, TaskDir: cfg.TaskDir, ShimPID: shimPID, ShimStart: shimStart,
		PID: info.PID, StartedAt: info.StartedAt}
	if h.StartedAt.IsZero() {
		h.StartedAt = time.Now()
	}
	d.track(h, shim)
	d.log.Info("micro-VM started", "task", cfg.ID, "qemu_pid", h.PID, "shim_pid", shimPID, "accel", machine.Accel,
		"vcpus", machine.VCPUs, "memory_mib", machine.MemoryMiB, "initrd_bytes", size)
	return &h, nil
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

func (d *Driver) track(h drivers.TaskHandle, shim *os.Process) {
	e := d.tasks.Put(h.ID, &task{handle: h, shim: shim})
	d.tasks.Go(func() {
		taskfile.WatchShim(taskfile.ShimWatch{ExitPath: filepath.Join(h.TaskDir, exitFile),
			ShimPID: h.ShimPID, ShimStart: h.ShimStart, Shim: shim, Poll: d.cfg.Poll,
			Lost: "micro-VM shim exited without a result"}, e.Exit, d.tasks.Closed())
	})
}

// Close stops watching tasks and waits for the driver's goroutines; the
// VMs keep running.
func (d *Driver) Close() error {
	d.tasks.Close()
	return nil
}

// RecoverTask re-attaches to a VM started by an earlier agent process.
func (d *Driver) RecoverTask(h *drivers.TaskHandle) error {
	if d.tasks.Has(h.ID) {
		return nil
	}
	if _, err := os.Stat(h.TaskDir); err != nil {
		return fmt.Errorf("recover %s: %w", h.ID, drivers.ErrTaskNotFound)
	}
	d.track(*h, nil)
	d.log.Info("micro-VM recovered", "task", h.ID, "qemu_pid", h.PID, "shim_alive", taskfile.SameProcess(h.ShimPID, h.ShimStart))
	return nil
}

// WaitTask blocks until the task ends, ctx is done or the driver closes.
func (d *Driver) WaitTask(ctx context.Context, id string) (*drivers.ExitResult, error) {
	return d.tasks.Wait(ctx, id)
}

// StopTask asks the guest to stop (the shim passes SIGTERM on to the
// guest's init, which sends SIGTERM to the command), waits up to timeout,
// then kills qemu. It returns once the shim has reported the exit.
func (d *Driver) StopTask(id string, timeout time.Duration) error {
	e, err := d.tasks.Get(id)
	if err != nil {
		return err
	}
	if e.Exited() {
		return nil
	}
	t := e.Data
	if taskfile.SameProcess(t.handle.ShimPID, t.handle.ShimStart) {
		if err := syscall.Kill(t.handle.ShimPID, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("stop %s: %w", id, err)
		}
	}
	select {
	case <-e.Done():
		return nil
	case <-time.After(timeout):
	}
	d.log.Info("guest did not stop in time, killing qemu", "task", id, "grace", timeout)
	d.killVMM(t)
	select {
	case <-e.Done():
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
	e, err := d.tasks.Get(id)
	if err != nil {
		return err
	}
	t := e.Data
	d.killVMM(t)
	if err := os.Remove(filepath.Join(t.handle.TaskDir, initrdFile)); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("destroy %s: %w", id, err)
	}
	d.tasks.Delete(id)
	return nil
}
