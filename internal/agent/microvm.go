package agent

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
