package microvm

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// vm is one guest's machine: what qemu is told.
type vm struct {
	QEMU, Kernel, Initrd string
	Accel                Accel
	VCPUs                int
	MemoryMiB            int64
	TSCKHz               int64 // TCG only
}

// kernelCmdline is the guest kernel's command line. Under TCG the kernel
// is told the TSC frequency and the delay-loop constant: microvm has no
// HPET or PM timer to calibrate against, and calibrating against the PIT
// under emulation stalls the boot for minutes.
func (v vm) kernelCmdline() string {
	args := []string{
		"console=ttyS0", "8250.nr_uarts=1", // the one ISA serial port of microvm
		"pci=off", // microvm has no PCI bus; probing one only prints an error
		"rdinit=" + guestInitPath,
		"panic=-1", // a panic resets, and -no-reboot turns that into qemu's exit
		"quiet",
	}
	if v.Accel == AccelTCG {
		khz := v.TSCKHz
		if khz <= 0 {
			khz = defaultTSCKHz
		}
		// lpj: loops per jiffy of a TSC delay loop at HZ=250 (Debian).
		args = append(args, "tsc_early_khz="+strconv.FormatInt(khz, 10), "lpj="+strconv.FormatInt(khz*4, 10), "no_timer_check")
	}
	return strings.Join(args, " ")
}

// argv is qemu's command line. The serial console is qemu's stdin and
// stdout; nothing else is attached (no network, no disks, no monitor), and
// qemu runs under its own seccomp sandbox.
func (v vm) argv() []string {
	a := []string{v.QEMU,
		"-M", "microvm",
		"-accel", string(v.Accel),
		"-smp", strconv.Itoa(max(v.VCPUs, 1)),
		"-m", strconv.FormatInt(v.MemoryMiB, 10),
		"-nodefaults", "-no-user-config", "-display", "none", "-no-reboot",
		// qemu's seccomp filter: a guest that breaks into the VMM still
		// cannot spawn, raise privileges or use obsolete system calls.
		"-sandbox", "on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny",
		"-kernel", v.Kernel,
		"-initrd", v.Initrd,
		"-append", v.kernelCmdline(),
		"-chardev", "stdio,id=console,signal=off",
		"-serial", "chardev:console",
	}
	if v.Accel == AccelKVM {
		a = append(a, "-cpu", "host")
	}
	return a
}

// Guest sizing.
const (
	// MinMemoryBytes is the least memory a guest gets: the kernel and
	// busybox need about 40 MiB before the image is unpacked.
	MinMemoryBytes = 128 << 20
	// initrdFactor: the unpacked image lives in the initramfs tmpfs,
	// which may fill only half the guest's memory, and while it unpacks
	// the archive is in memory too.
	initrdFactor = 2
)

// vcpusFor turns a CPU request in millicores into whole vCPUs (at least
// one, rounding up).
func vcpusFor(cpuMilli int64) int {
	if cpuMilli <= 0 {
		return 1
	}
	return int((cpuMilli + 999) / 1000)
}

// memoryMiBFor turns a memory request into qemu's -m, refusing requests
// too small to boot or to hold the unpacked image.
func memoryMiBFor(memoryBytes, initrdBytes int64) (int64, error) {
	if memoryBytes < MinMemoryBytes {
		return 0, fmt.Errorf("resources.memory: a micro-VM needs at least %dMiB, the task asks for %dMiB", MinMemoryBytes>>20, memoryBytes>>20)
	}
	if need := MinMemoryBytes/2 + initrdFactor*initrdBytes; memoryBytes < need {
		return 0, fmt.Errorf("resources.memory: the image unpacks to %dMiB in guest memory; ask for at least %dMiB", initrdBytes>>20, (need+(1<<20)-1)>>20)
	}
	return (memoryBytes + (1 << 20) - 1) >> 20, nil
}

// probeBoot boots a busybox-only guest and returns the time from starting
// qemu to the init's boot marker. It is the KVM probe, and the benchmark's
// measure of boot time to userspace.
func probeBoot(ctx context.Context, h *Host, accel Accel, limit time.Duration) (time.Duration, error) {
	dir, err := os.MkdirTemp("", "strata-microvm-probe-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	g := guestTask{Argv: []string{"/.strata/busybox", "true"}, Env: []string{"PATH=" + basePath}, WorkDir: "/", Hostname: "probe", Nonce: newNonce()}
	initrd := filepath.Join(dir, "initrd.cpio")
	f, err := os.Create(initrd)
	if err != nil {
		return 0, err
	}
	if err := writeGuestArchive(f, h.busybox, g); err != nil {
		f.Close()
		return 0, err
	}
	if err := f.Close(); err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	v := vm{QEMU: h.QEMU, Kernel: h.Kernel, Initrd: initrd, Accel: accel, VCPUs: 1, MemoryMiB: MinMemoryBytes >> 20, TSCKHz: h.TSCKHz}
	argv := v.argv()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if strings.Contains(sc.Text(), g.bootedMarker()) {
			return time.Since(start), nil
		}
	}
	if ctx.Err() != nil {
		return 0, fmt.Errorf("no userspace within %s", limit)
	}
	cmd.Wait()
	if msg := strings.TrimSpace(stderr.String()); msg != "" {
		return 0, errors.New(lastLine(msg))
	}
	return 0, errors.New("the probe guest ended before reaching userspace")
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
