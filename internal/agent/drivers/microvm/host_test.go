package microvm

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestChooseAccel(t *testing.T) {
	fast := func(time.Duration) (time.Duration, error) { return 200 * time.Millisecond, nil }
	slow := func(time.Duration) (time.Duration, error) { return 40 * time.Second, nil }
	broken := func(time.Duration) (time.Duration, error) { return 0, errors.New("no userspace within 5s") }
	probed := false
	spy := func(time.Duration) (time.Duration, error) { probed = true; return time.Millisecond, nil }
	for _, tc := range []struct {
		name      string
		dev       bool
		ci        cpuInfo
		probe     kvmProbe
		want      Accel
		why       string
		mustProbe bool
	}{
		{name: "no device", dev: false, ci: cpuInfo{HardwareVirt: true}, probe: spy, want: AccelTCG, why: "no usable /dev/kvm"},
		{name: "paravirtual KVM without vmx or svm", dev: true, ci: cpuInfo{}, probe: spy, want: AccelTCG, why: "no vmx or svm"},
		{name: "real and fast", dev: true, ci: cpuInfo{HardwareVirt: true}, probe: fast, want: AccelKVM, why: "200ms"},
		{name: "real but slow", dev: true, ci: cpuInfo{HardwareVirt: true}, probe: slow, want: AccelTCG, why: "over 5s"},
		{name: "probe fails", dev: true, ci: cpuInfo{HardwareVirt: true}, probe: broken, want: AccelTCG, why: "probe failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			probed = false
			got, why := chooseAccel(tc.dev, tc.ci, tc.probe, 5*time.Second)
			if got != tc.want || !strings.Contains(why, tc.why) {
				t.Errorf("got %s (%s), want %s (%s)", got, why, tc.want, tc.why)
			}
			if probed {
				t.Error("probed KVM although it cannot be real")
			}
		})
	}
}

func TestReadCPUInfo(t *testing.T) {
	for _, tc := range []struct {
		name string
		text string
		want cpuInfo
	}{
		{"intel with VT-x", "processor\t: 0\ncpu MHz\t\t: 2095.995\nflags\t\t: fpu vme vmx sse\n", cpuInfo{HardwareVirt: true, MHz: 2095}},
		{"amd with AMD-V", "flags\t\t: fpu svm\ncpu MHz\t: 3000.0\n", cpuInfo{HardwareVirt: true, MHz: 3000}},
		{"guest without nesting", "cpu MHz\t: 2000\nflags\t: fpu hypervisor sse\n", cpuInfo{MHz: 2000}},
		{"vmxnet is not vmx", "flags\t: vmxnet svmx\n", cpuInfo{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "cpuinfo")
			os.WriteFile(p, []byte(tc.text), 0o644)
			got, err := readCPUInfo(p)
			if err != nil || got != tc.want {
				t.Errorf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestGuestSizing(t *testing.T) {
	for _, tc := range []struct {
		cpuMilli int64
		want     int
	}{{0, 1}, {100, 1}, {1000, 1}, {1001, 2}, {2500, 3}} {
		if got := vcpusFor(tc.cpuMilli); got != tc.want {
			t.Errorf("vcpusFor(%d) = %d, want %d", tc.cpuMilli, got, tc.want)
		}
	}
	for _, tc := range []struct {
		name           string
		memory, initrd int64
		want           int64
		err            string
	}{
		{name: "minimum", memory: 128 << 20, initrd: 4 << 20, want: 128},
		{name: "rounds up to MiB", memory: 200<<20 + 1, initrd: 4 << 20, want: 201},
		{name: "too small to boot", memory: 64 << 20, err: "resources.memory: a micro-VM needs at least 128MiB"},
		{name: "image does not fit", memory: 256 << 20, initrd: 200 << 20, err: "resources.memory: the image unpacks to 200MiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := memoryMiBFor(tc.memory, tc.initrd)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("got %d, %v; want %d", got, err, tc.want)
			}
		})
	}
}

func TestKernelCmdline(t *testing.T) {
	tcg := vm{Accel: AccelTCG, TSCKHz: 2_095_000}.kernelCmdline()
	for _, want := range []string{"console=ttyS0", "rdinit=/.strata/init", "panic=-1", "tsc_early_khz=2095000", "lpj=8380000", "no_timer_check"} {
		if !strings.Contains(tcg, want) {
			t.Errorf("TCG cmdline %q lacks %q", tcg, want)
		}
	}
	if kvm := (vm{Accel: AccelKVM, TSCKHz: 2_095_000}).kernelCmdline(); strings.Contains(kvm, "tsc_early_khz") || strings.Contains(kvm, "lpj") {
		t.Errorf("KVM cmdline %q overrides the TSC, which KVM reports itself", kvm)
	}
}

func TestLoadBusyboxWantsAStaticBinary(t *testing.T) {
	if _, err := os.Stat("/bin/ls"); err == nil {
		if _, _, err := loadBusybox("/bin/ls"); err == nil || !strings.Contains(err.Error(), "dynamically linked") {
			t.Errorf("dynamic /bin/ls accepted as busybox: %v", err)
		}
	}
	if _, _, err := loadBusybox(filepath.Join(t.TempDir(), "none")); !errors.Is(err, ErrNotAvailable) {
		t.Errorf("missing busybox: %v, want ErrNotAvailable", err)
	}
}
