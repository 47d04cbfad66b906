package cli

import (
	"github.com/spf13/cobra"

	"github.com/strata-dev/strata/internal/agent"
)

// microVMFlags configure the agent's micro-VM driver (docs/drivers.md).
type microVMFlags struct {
	kernel, busybox, qemu, accel string
}

func (f *microVMFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.kernel, "microvm-kernel", "", "guest kernel of micro-VM tasks (default /vmlinuz, else the newest /boot/vmlinuz-*; from Debian's linux-image-cloud-amd64)")
	cmd.Flags().StringVar(&f.busybox, "microvm-busybox", "", "statically linked busybox the guest init runs on (default /bin/busybox, from Debian's busybox-static)")
	cmd.Flags().StringVar(&f.qemu, "microvm-qemu", "", "qemu binary (default qemu-system-x86_64 on PATH, from Debian's qemu-system-x86)")
	cmd.Flags().StringVar(&f.accel, "microvm-accel", "auto", "how micro-VMs run: auto (KVM only where the CPU has vmx/svm and a probe guest boots within 5s, else TCG), kvm, tcg, or off (the node does not offer the microvm driver); `strata nodes` shows the choice as the label microvm.accel")
}

func (f *microVMFlags) config() (agent.MicroVMConfig, error) {
	switch f.accel {
	case "", "auto", "kvm", "tcg", agent.MicroVMOff:
	default:
		return agent.MicroVMConfig{}, failf("--microvm-accel %q: want auto, kvm, tcg or off", f.accel)
	}
	return agent.MicroVMConfig{Kernel: f.kernel, Busybox: f.busybox, QEMU: f.qemu, Accel: f.accel}, nil
}
