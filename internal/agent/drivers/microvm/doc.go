// Package microvm is the agent's micro-VM driver: each task boots its own
// Linux guest under qemu's `-M microvm` machine, with vCPUs and memory from
// its resources and its root file system from its OCI image.
//
// The driver flattens the image's layers (whiteouts applied) into a newc
// cpio archive and appends a second archive with a static busybox and the
// guest init (guest/init.sh); the kernel unpacks both into its initramfs,
// which becomes the guest's root. The init runs the task's command with the
// serial console as its output, prints a boot marker and, when the command
// ends, an exit marker with its exit code, then powers the guest off. Like
// the exec driver, a detached shim (`strata __microvm-shim <taskdir>`) owns
// qemu so that VMs outlive the agent: it copies the console into the task's
// stdout log (markers taken out), turns the driver's SIGTERM into a stop
// line on the console (the init sends SIGTERM to the command), and writes
// exit.json. The driver then kills qemu if the guest has not stopped within
// the kill timeout.
//
// KVM is used only where it is real (hardware virtualisation flags and a
// probe guest that boots fast); otherwise guests run under TCG. The driver
// advertises itself and its accelerator as node labels (driver.microvm=1,
// microvm.accel=kvm|tcg).
//
// It must never kill a process other than its own tasks' qemu (checked by
// command line), and never download anything: kernel, busybox and qemu come
// from the host's Debian packages, images from local OCI layouts.
package microvm
