package microvm

import (
	"bufio"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Accel is how guests run: "kvm" (hardware virtualisation) or "tcg"
// (qemu's software emulation).
type Accel string

// Accelerators.
const (
	AccelKVM Accel = "kvm"
	AccelTCG Accel = "tcg"
)

// Host is what the driver found on the machine: the VMM, the guest kernel,
// the static busybox every guest gets, and the accelerator.
type Host struct {
	QEMU    string
	Kernel  string
	Busybox string
	// Accel and AccelReason say which accelerator guests use and why.
	Accel       Accel
	AccelReason string
	// TSCKHz is the host TSC frequency handed to TCG guests, which
	// cannot calibrate it against a timer in reasonable time.
	TSCKHz int64

	busybox []byte
}

// Well-known places, from the Debian packages qemu-system-x86,
// linux-image-cloud-amd64 (or linux-image-amd64) and busybox-static.
var (
	qemuNames       = []string{"qemu-system-x86_64"}
	kernelLinks     = []string{"/vmlinuz", "/boot/vmlinuz"}
	kernelGlob      = "/boot/vmlinuz-*"
	busyboxDefaults = []string{"/bin/busybox", "/usr/bin/busybox"}
)

// ErrNotAvailable is wrapped by discovery errors: the driver cannot run on
// this node (the agent then does not advertise it).
var ErrNotAvailable = errors.New("microvm driver not available")

// findQEMU returns path, or qemu-system-x86_64 from PATH.
func findQEMU(path string) (string, error) {
	if path != "" {
		return checkExecutable(path)
	}
	for _, n := range qemuNames {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: qemu-system-x86_64 not found on PATH (apt-get install qemu-system-x86)", ErrNotAvailable)
}

func checkExecutable(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrNotAvailable, err)
	}
	if st.Mode()&0o111 == 0 {
		return "", fmt.Errorf("%w: %s is not executable", ErrNotAvailable, path)
	}
	return path, nil
}

// findKernel returns path, or the kernel /vmlinuz points at, or the newest
// /boot/vmlinuz-*. It must be readable (Debian's are root-only).
func findKernel(path string) (string, error) {
	candidates := []string{path}
	if path == "" {
		candidates = append([]string(nil), kernelLinks...)
		found, _ := filepath.Glob(kernelGlob)
		sort.Slice(found, func(i, j int) bool { return modTime(found[i]).After(modTime(found[j])) })
		candidates = append(candidates, found...)
	}
	var lastErr error
	for _, c := range candidates {
		f, err := os.Open(c)
		if err != nil {
			lastErr = err
			continue
		}
		f.Close()
		return c, nil
	}
	if path != "" {
		return "", fmt.Errorf("%w: kernel %s: %v", ErrNotAvailable, path, lastErr)
	}
	return "", fmt.Errorf("%w: no readable guest kernel at /vmlinuz or %s (apt-get install linux-image-cloud-amd64, or pass --microvm-kernel)", ErrNotAvailable, kernelGlob)
}

func modTime(p string) time.Time {
	st, err := os.Stat(p)
	if err != nil {
		return time.Time{}
	}
	return st.ModTime()
}

// loadBusybox reads a statically linked busybox: the guest has no C
// library of its own unless its image brings one.
func loadBusybox(path string) (string, []byte, error) {
	candidates := []string{path}
	if path == "" {
		candidates = busyboxDefaults
	}
	for _, c := range candidates {
		data, err := os.ReadFile(c)
		if err != nil {
			continue
		}
		if err := checkStatic(c); err != nil {
			if path == "" {
				continue
			}
			return "", nil, err
		}
		return c, data, nil
	}
	return "", nil, fmt.Errorf("%w: no statically linked busybox at %s (apt-get install busybox-static, or pass --microvm-busybox)", ErrNotAvailable, strings.Join(candidates, " or "))
}

// checkStatic fails for an ELF file with a program interpreter (dynamic).
func checkStatic(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("%w: busybox %s: %v", ErrNotAvailable, path, err)
	}
	defer f.Close()
	if f.Machine != elf.EM_X86_64 {
		return fmt.Errorf("%w: busybox %s is for %v, guests are x86_64", ErrNotAvailable, path, f.Machine)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%w: busybox %s is dynamically linked (apt-get install busybox-static)", ErrNotAvailable, path)
		}
	}
	return nil
}

// cpuInfo is what /proc/cpuinfo says about virtualisation and the TSC.
type cpuInfo struct {
	HardwareVirt bool  // vmx (Intel VT-x) or svm (AMD-V)
	MHz          int64 // "cpu MHz" of the first CPU
}

func readCPUInfo(path string) (cpuInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return cpuInfo{}, err
	}
	defer f.Close()
	var ci cpuInfo
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	seenFlags := false
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(key) {
		case "flags":
			if seenFlags {
				continue
			}
			seenFlags = true
			for _, fl := range strings.Fields(val) {
				if fl == "vmx" || fl == "svm" {
					ci.HardwareVirt = true
				}
			}
		case "cpu MHz":
			if ci.MHz == 0 {
				if f, err := strconv.ParseFloat(strings.TrimSpace(val), 64); err == nil {
					ci.MHz = int64(f)
				}
			}
		}
	}
	return ci, sc.Err()
}

// defaultTSCKHz is used when /proc/cpuinfo gives no frequency.
const defaultTSCKHz = 2_000_000

// kvmProbe boots a probe guest under KVM and reports how long it took to
// reach userspace.
type kvmProbe func(limit time.Duration) (time.Duration, error)

// chooseAccel decides between KVM and TCG. KVM is chosen only when it is
// real: the device exists, the CPU has hardware virtualisation flags (a
// paravirtual /dev/kvm on a CPU without them runs guests thousands of times
// slower than TCG), and a probe guest reaches userspace within limit.
func chooseAccel(kvmDevice bool, ci cpuInfo, probe kvmProbe, limit time.Duration) (Accel, string) {
	switch {
	case !kvmDevice:
		return AccelTCG, "no usable /dev/kvm"
	case !ci.HardwareVirt:
		return AccelTCG, "/dev/kvm exists but the CPU has no vmx or svm flag (paravirtual or emulated KVM)"
	case probe == nil:
		return AccelTCG, "no KVM probe"
	}
	took, err := probe(limit)
	switch {
	case err != nil:
		return AccelTCG, fmt.Sprintf("KVM probe failed: %v", err)
	case took > limit:
		return AccelTCG, fmt.Sprintf("KVM probe reached userspace in %s, over %s", took.Round(time.Millisecond), limit)
	}
	return AccelKVM, fmt.Sprintf("KVM probe reached userspace in %s", took.Round(time.Millisecond))
}

// kvmUsable reports whether the KVM device can be opened read-write.
func kvmUsable(dev string) bool {
	f, err := os.OpenFile(dev, os.O_RDWR, 0)
	if err != nil {
		return false
	}
	f.Close()
	return true
}
