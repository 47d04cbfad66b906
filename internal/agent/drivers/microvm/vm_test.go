package microvm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/drivers"
	"github.com/strata-dev/strata/internal/agent/drivers/microvm/ocitest"
	"github.com/strata-dev/strata/internal/agent/drivers/taskfile"
	"github.com/strata-dev/strata/internal/agent/logs"
)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "__microvm-shim" {
		os.Exit(ShimMain(os.Args[2:]))
	}
	os.Exit(m.Run())
}

// newVMDriver returns a driver that boots real guests, or skips the test
// with the reason it cannot: CI installs qemu-system-x86,
// linux-image-cloud-amd64 and busybox-static, so there it runs.
func newVMDriver(t testing.TB) *Driver {
	t.Helper()
	if testing.Short() {
		t.Skip("boots micro-VMs; not in -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root: Debian's guest kernels in /boot are readable by root only")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	d, err := New(Config{ShimCommand: []string{self, "__microvm-shim"}, Poll: 20 * time.Millisecond})
	if errors.Is(err, ErrNotAvailable) {
		t.Skipf("cannot boot micro-VMs here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	t.Logf("accel %s (%s)", d.Host().Accel, d.Host().AccelReason)
	return d
}

// busyboxImage writes an image of the host's static busybox and returns
// its oci-archive reference.
func busyboxImage(t testing.TB, d *Driver) string {
	t.Helper()
	layer, err := ocitest.BusyboxLayer(d.Host().Busybox)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "busybox.oci.tar")
	img := ocitest.Image{Layers: []ocitest.Layer{layer}, Env: []string{"FROM_IMAGE=yes"}, Cmd: []string{"/bin/sh"}}
	if err := ocitest.WriteArchive(path, img); err != nil {
		t.Fatal(err)
	}
	return "oci-archive:" + path
}

func vmTask(t testing.TB, image string, res api.Resources, cmd ...string) *drivers.TaskConfig {
	name := "vm"
	allocID := fmt.Sprintf("vmtest-%d", time.Now().UnixNano())
	dir := t.TempDir()
	return &drivers.TaskConfig{
		ID: allocID + "/" + name, AllocID: allocID, Name: name,
		Task: &api.Task{Name: name, Driver: Name, Image: image, Command: cmd, Resources: res,
			Secrets: []*api.Secret{{Name: "token", Value: "s3cret"}}},
		Env:     map[string]string{"GREETING": "hello from the guest"},
		TaskDir: dir, Resources: res, NUMANode: -1,
	}
}

func readLog(t testing.TB, dir string) string {
	t.Helper()
	b, err := os.ReadFile(logs.FileName(dir, "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func waitResult(t *testing.T, d *Driver, id string, limit time.Duration) *drivers.ExitResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	res, err := d.WaitTask(ctx, id)
	if err != nil {
		t.Fatalf("wait %s: %v", id, err)
	}
	return res
}

// pollLog waits until the task's console log contains want.
func pollLog(t testing.TB, dir, want string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if b, _ := os.ReadFile(logs.FileName(dir, "stdout")); strings.Contains(string(b), want) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("log of %s never showed %q:\n%s", dir, want, readLog(t, dir))
}

const vmLimit = 3 * time.Minute

func TestMicroVMRunsCommandWithExitCode(t *testing.T) {
	d := newVMDriver(t)
	image := busyboxImage(t, d)
	for _, tc := range []struct {
		name     string
		res      api.Resources
		cmd      []string
		wantCode int
		wantOut  []string
	}{
		{
			name: "output, environment and resources", res: api.Resources{CPUMilli: 1500, MemoryBytes: 160 << 20},
			cmd:     []string{"/bin/sh", "-c", `echo "$GREETING"; echo "image env $FROM_IMAGE"; echo "cpus $(nproc)"; echo "secret $(cat $STRATA_SECRETS_DIR/token)"; printf 'no newline'`},
			wantOut: []string{"hello from the guest\n", "image env yes\n", "cpus 2\n", "secret s3cret\n", "no newline"},
		},
		{
			name: "non-zero exit code", res: api.Resources{CPUMilli: 500, MemoryBytes: 128 << 20},
			cmd: []string{"/bin/sh", "-c", "echo failing; exit 7"}, wantCode: 7, wantOut: []string{"failing\n"},
		},
		{
			name: "missing program", res: api.Resources{CPUMilli: 500, MemoryBytes: 128 << 20},
			cmd: []string{"/no/such/program"}, wantCode: 127, wantOut: []string{"/no/such/program"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := vmTask(t, image, tc.res, tc.cmd...)
			h, err := d.StartTask(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			res := waitResult(t, d, h.ID, vmLimit)
			out := readLog(t, cfg.TaskDir)
			if res.ExitCode != tc.wantCode || res.Err != "" {
				t.Fatalf("result %+v, want exit code %d; log:\n%s", res, tc.wantCode, out)
			}
			for _, w := range tc.wantOut {
				if !strings.Contains(out, w) {
					t.Errorf("log lacks %q:\n%s", w, out)
				}
			}
			if strings.Contains(out, "STRATA-") {
				t.Errorf("log shows the init's markers:\n%s", out)
			}
			var boot bootInfo
			if ok, err := taskfile.ReadJSON(filepath.Join(cfg.TaskDir, bootFile), &boot); !ok || err != nil {
				t.Errorf("no boot report: %v", err)
			} else {
				t.Logf("boot to userspace %s (accel %s)", boot.Boot.Round(time.Millisecond), d.Host().Accel)
			}
			if err := d.DestroyTask(h.ID); err != nil {
				t.Fatal(err)
			}
			if exists(filepath.Join(cfg.TaskDir, initrdFile)) {
				t.Error("initramfs left behind after destroy")
			}
			if _, alive := taskfile.ProcStart(h.PID); alive {
				t.Errorf("qemu %d still runs after destroy", h.PID)
			}
		})
	}
}

func TestMicroVMStop(t *testing.T) {
	d := newVMDriver(t)
	image := busyboxImage(t, d)
	for _, tc := range []struct {
		name       string
		script     string
		grace      time.Duration
		wantCode   int
		wantSignal int
		wantOut    string
	}{
		{
			name:   "graceful: the command gets SIGTERM",
			script: `trap 'echo got TERM; exit 3' TERM; echo ready; while true; do sleep 1; done`,
			grace:  time.Minute, wantCode: 3, wantOut: "got TERM",
		},
		{
			name:   "forced after the kill timeout",
			script: `trap '' TERM; echo ready; while true; do sleep 1; done`,
			grace:  2 * time.Second, wantCode: 137, wantSignal: 9,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := vmTask(t, image, api.Resources{CPUMilli: 1000, MemoryBytes: 128 << 20}, "/bin/sh", "-c", tc.script)
			h, err := d.StartTask(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			pollLog(t, cfg.TaskDir, "ready", vmLimit)
			if err := d.StopTask(h.ID, tc.grace); err != nil {
				t.Fatal(err)
			}
			res := waitResult(t, d, h.ID, time.Minute)
			if res.ExitCode != tc.wantCode || res.Signal != tc.wantSignal {
				t.Fatalf("result %+v, want exit code %d signal %d; log:\n%s", res, tc.wantCode, tc.wantSignal, readLog(t, cfg.TaskDir))
			}
			if tc.wantOut != "" && !strings.Contains(readLog(t, cfg.TaskDir), tc.wantOut) {
				t.Errorf("log lacks %q:\n%s", tc.wantOut, readLog(t, cfg.TaskDir))
			}
			if err := d.DestroyTask(h.ID); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A new driver (an agent restarted) re-attaches to a running guest and
// still gets its exit code.
func TestMicroVMRecoveredByANewDriver(t *testing.T) {
	first := newVMDriver(t)
	image := busyboxImage(t, first)
	cfg := vmTask(t, image, api.Resources{CPUMilli: 1000, MemoryBytes: 128 << 20}, "/bin/sh", "-c", "echo ready; sleep 2; exit 4")
	h, err := first.StartTask(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	first.Close()
	second := newVMDriver(t)
	if err := second.RecoverTask(h); err != nil {
		t.Fatal(err)
	}
	if res := waitResult(t, second, h.ID, vmLimit); res.ExitCode != 4 || res.Err != "" {
		t.Fatalf("result %+v, want exit code 4; log:\n%s", res, readLog(t, cfg.TaskDir))
	}
	if err := second.DestroyTask(h.ID); err != nil {
		t.Fatal(err)
	}
}

// A guest that cannot boot ends with a reason, and nothing is left.
func TestMicroVMThatDoesNotBoot(t *testing.T) {
	d := newVMDriver(t)
	image := busyboxImage(t, d)
	notAKernel := filepath.Join(t.TempDir(), "vmlinuz")
	os.WriteFile(notAKernel, []byte("not a kernel"), 0o644)
	for _, tc := range []struct {
		name  string
		tweak func(*Driver)
		want  string
	}{
		{"qemu refuses the kernel", func(d *Driver) { d.host.Kernel = notAKernel }, "qemu failed before the guest reported an exit code"},
		{"no userspace within the boot timeout", func(d *Driver) { d.cfg.BootTimeout = 50 * time.Millisecond }, "did not reach userspace within 50ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			host := *d.host
			broken := &Driver{cfg: d.cfg, host: &host, log: d.log, tasks: drivers.NewTable[*task]()}
			t.Cleanup(func() { broken.Close() })
			tc.tweak(broken)
			cfg := vmTask(t, image, api.Resources{CPUMilli: 1000, MemoryBytes: 128 << 20}, "/bin/true")
			h, err := broken.StartTask(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			res := waitResult(t, broken, h.ID, time.Minute)
			if !strings.Contains(res.Err, tc.want) {
				t.Fatalf("result %+v, want a reason containing %q", res, tc.want)
			}
			t.Logf("reason: %s", res.Err)
			if err := broken.DestroyTask(h.ID); err != nil {
				t.Fatal(err)
			}
			if _, alive := taskfile.ProcStart(h.PID); alive || exists(filepath.Join(cfg.TaskDir, initrdFile)) {
				t.Errorf("left behind: qemu alive %v, initramfs %v", alive, exists(filepath.Join(cfg.TaskDir, initrdFile)))
			}
		})
	}
}

// The probe that decides for KVM measures a real boot; under TCG here.
func TestProbeBootMeasuresABoot(t *testing.T) {
	d := newVMDriver(t)
	took, err := probeBoot(context.Background(), d.host, AccelTCG, vmLimit)
	if err != nil || took <= 0 {
		t.Fatalf("probe: %s, %v", took, err)
	}
	t.Logf("TCG probe guest reached userspace in %s", took.Round(time.Millisecond))
	if _, err := probeBoot(context.Background(), d.host, AccelTCG, time.Millisecond); err == nil {
		t.Error("a probe with 1ms to boot succeeded")
	}
}

// TestMicroVMLeaseFence: a fenced micro-VM task had no fence watcher at
// all (an atMostOnce group on this driver ran past its lease; found
// looking for siblings of issue 18 defect 4). Its shim now enforces the
// fence as the exec shim does: the guest's command is stopped when the
// lease file is gone, and the exit says fenced.
func TestMicroVMLeaseFence(t *testing.T) {
	d := newVMDriver(t)
	image := busyboxImage(t, d)
	cfg := vmTask(t, image, api.Resources{CPUMilli: 1000, MemoryBytes: 128 << 20}, "/bin/sh", "-c",
		`trap 'echo got TERM; exit 3' TERM; echo ready; while true; do sleep 1; done`)
	cfg.Fenced = true
	far := drivers.BootClock() + time.Hour
	if err := drivers.WriteLeaseFence(cfg.TaskDir, drivers.LeaseFence{StopAt: far, KillAt: far + 30*time.Second, Why: "test"}); err != nil {
		t.Fatal(err)
	}
	h, err := d.StartTask(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	pollLog(t, cfg.TaskDir, "ready", vmLimit)
	if err := os.Remove(filepath.Join(cfg.TaskDir, drivers.LeaseFile)); err != nil {
		t.Fatal(err)
	}
	res := waitResult(t, d, h.ID, time.Minute)
	if !res.Fenced || res.ExitCode != 3 {
		t.Fatalf("result %+v, want fenced, exit code 3; log:\n%s", res, readLog(t, cfg.TaskDir))
	}
	d.DestroyTask(h.ID)
}
