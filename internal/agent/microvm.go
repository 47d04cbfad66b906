package agent

import (
	"errors"
	"maps"

	"github.com/strata-dev/strata/internal/agent/drivers/microvm"
)

// MicroVMConfig configures the micro-VM driver (docs/drivers.md). The zero
// value finds qemu, the guest kernel and busybox on the host and chooses
// the accelerator itself.
type MicroVMConfig struct {
	Kernel  string // guest kernel; default /vmlinuz or the newest /boot/vmlinuz-*
	Busybox string // static busybox for the guest init; default /bin/busybox
	QEMU    string // default qemu-system-x86_64 from PATH
	// Accel is auto (default), kvm, tcg, or off (the node does not offer
	// the driver).
	Accel string
}

// MicroVMOff is the Accel that turns the driver off.
const MicroVMOff = "off"

// nodeLabeler is a driver that describes the node: its labels are
// advertised with the node's own (the micro-VM driver says which
// accelerator its guests use).
type nodeLabeler interface {
	Labels() map[string]string
}

var _ nodeLabeler = (*microvm.Driver)(nil)

// addMicroVM offers the micro-VM driver when the host can boot guests. A
// host without qemu, a guest kernel or a static busybox simply does not
// offer it; the reason is logged and kept.
func (a *Agent) addMicroVM() {
	if a.cfg.MicroVM.Accel == MicroVMOff {
		return
	}
	d, err := microvm.New(microvm.Config{
		ShimCommand: []string{a.cfg.ShimCommand[0], "__microvm-shim"},
		Kernel:      a.cfg.MicroVM.Kernel, Busybox: a.cfg.MicroVM.Busybox, QEMU: a.cfg.MicroVM.QEMU,
		Accel: a.cfg.MicroVM.Accel, Logger: a.log,
	})
	if err != nil {
		if errors.Is(err, microvm.ErrNotAvailable) {
			a.log.Info("micro-VM driver not offered", "why", err)
		} else {
			a.log.Warn("micro-VM driver unavailable", "err", err)
		}
		a.driverErrs[microvm.Name] = err
		return
	}
	a.drivers[microvm.Name] = d
	a.closers = append(a.closers, d)
}

// driverLabels merges the labels of every driver that describes the node.
func (a *Agent) driverLabels(into map[string]string) {
	for _, d := range a.drivers {
		if l, ok := d.(nodeLabeler); ok {
			maps.Copy(into, l.Labels())
		}
	}
}

var _ Driver = (*microvm.Driver)(nil)
