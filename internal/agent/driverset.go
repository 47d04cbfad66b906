package agent

import (
	"errors"
	"path/filepath"

	"github.com/strata-dev/strata/internal/agent/drivers"
	"github.com/strata-dev/strata/internal/agent/drivers/containerd"
	"github.com/strata-dev/strata/internal/agent/drivers/exec"
	"github.com/strata-dev/strata/internal/agent/drivers/microvm"
	"github.com/strata-dev/strata/internal/agent/drivers/mock"
)

// Driver runs tasks of one kind (drivers.Driver); Config.Drivers adds
// drivers of the caller's.
type Driver = drivers.Driver

// Checkpointer is a driver that checkpoints and restores its tasks
// (drivers.Checkpointer).
type Checkpointer = drivers.Checkpointer

// driverRegistrations is the node's task drivers: one entry per driver,
// in the order they are made, each with what it needs of the node (the
// composition is this list; adding a driver is one entry plus its
// package). criuPath is the criu the checkpoint probe found ("" none).
func (a *Agent) driverRegistrations(criuPath string) []drivers.Registration {
	cfg := a.cfg
	return []drivers.Registration{
		{
			Name:     exec.Name,
			Requires: "cgroups (v1 or v2) under --cgroup-root",
			Init: func() (drivers.Driver, error) {
				return exec.New(exec.Config{ShimCommand: cfg.ShimCommand, CgroupRoot: cfg.CgroupRoot, CgroupParent: cfg.CgroupParent,
					Logger: a.log, AllowRootTasks: cfg.AllowRootTasks, TasksRoot: filepath.Join(cfg.DataDir, "allocs"),
					CriuPath: criuPath, Checkpointable: cfg.CheckpointableTasks && criuPath != ""})
			},
		},
		{
			Name:     mock.Name,
			Requires: "nothing (in-process fake tasks)",
			Init:     func() (drivers.Driver, error) { return mock.New(), nil },
		},
		{
			Name:     containerd.Name,
			Requires: "a containerd socket that answers (--containerd-socket)",
			Init: func() (drivers.Driver, error) {
				if cfg.ContainerdSocket == "" {
					return nil, drivers.ErrNotConfigured
				}
				return containerd.New(containerd.Config{
					Socket: cfg.ContainerdSocket, Namespace: cfg.ContainerdNamespace,
					CriuPath: criuPath, StateDir: filepath.Join(cfg.DataDir, "containerd"),
					LogCommand:   []string{cfg.ShimCommand[0], "__containerd-log"},
					CgroupRoot:   cfg.CgroupRoot,
					CgroupParent: cfg.CgroupParent,
					ImageGCGrace: cfg.ImageGCGrace, AllowRootTasks: cfg.AllowRootTasks,
					Logger: a.log,
				})
			},
		},
		{
			Name:     microvm.Name,
			Requires: "qemu, a guest kernel and a static busybox (--microvm-*), and --microvm-accel other than off",
			Init: func() (drivers.Driver, error) {
				if cfg.MicroVM.Accel == MicroVMOff {
					return nil, drivers.ErrNotConfigured
				}
				d, err := microvm.New(microvm.Config{
					ShimCommand: []string{cfg.ShimCommand[0], "__microvm-shim"},
					Kernel:      cfg.MicroVM.Kernel, Busybox: cfg.MicroVM.Busybox, QEMU: cfg.MicroVM.QEMU,
					Accel: cfg.MicroVM.Accel, Logger: a.log,
				})
				if errors.Is(err, microvm.ErrNotAvailable) {
					return nil, errors.Join(drivers.ErrNotConfigured, err)
				}
				return d, err
			},
		},
	}
}

// loadDrivers makes the node's drivers and adds the caller's
// (Config.Drivers), which replace built-in ones of the same name.
func (a *Agent) loadDrivers(criuPath string) {
	a.drivers = drivers.Load(a.driverRegistrations(criuPath), a.log)
	for name, d := range a.cfg.Drivers {
		a.drivers.Add(name, d)
	}
}

// driverLabels merges the labels of every driver that describes the node.
func (a *Agent) driverLabels(into map[string]string) {
	for _, l := range a.drivers.All() {
		if l.Labels != nil {
			for k, v := range l.Labels.Labels() {
				into[k] = v
			}
		}
	}
}

// memoryKeepingDrivers names the drivers whose tasks a move keeps the
// memory of on this node (api.NodeCheckpoint.Drivers), sorted.
func (a *Agent) memoryKeepingDrivers() []string {
	var names []string
	for _, l := range a.drivers.All() {
		if cp := l.Checkpoint; cp != nil && cp.CanCheckpoint() && cp.KeepsMemory() {
			names = append(names, l.Name)
		}
	}
	return names
}
