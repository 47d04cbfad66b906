package exec

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/cgroup"
	"github.com/strata-dev/strata/internal/agent/drivers"
	"github.com/strata-dev/strata/internal/agent/drivers/driverstest"
)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "__shim":
			os.Exit(ShimMain(os.Args[2:]))
		case "__exec":
			os.Exit(ExecMain(os.Args[2:]))
		case "__task":
			os.Exit(TaskMain(os.Args[2:]))
		case "__plain":
			os.Exit(PlainMain(os.Args[2:]))
		}
	}
	os.Exit(m.Run())
}

func newTestDriver(t *testing.T) *Driver {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root for cgroups")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	d, err := New(Config{ShimCommand: []string{self, "__shim"}, Poll: 10 * time.Millisecond})
	if err != nil {
		t.Skipf("no cgroups: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func taskConfig(t *testing.T, name string, res api.Resources, cmd ...string) *drivers.TaskConfig {
	allocID := fmt.Sprintf("exectest-%d", time.Now().UnixNano())
	dir := filepath.Join(t.TempDir(), name)
	os.MkdirAll(dir, 0o755)
	t.Cleanup(func() {
		if g, err := cgroup.Open(mustDetect(), cgroup.DefaultRoot, cgroup.TaskPath(allocID, name)); err == nil {
			g.Kill(5 * time.Second)
			g.Remove()
		}
	})
	return &drivers.TaskConfig{
		ID: allocID + "/" + name, AllocID: allocID, Name: name,
		Task:    &api.Task{Name: name, Command: cmd, Resources: res},
		Env:     map[string]string{"GREETING": "hello"},
		TaskDir: dir, Resources: res, NUMANode: -1,
	}
}

func mustDetect() cgroup.Version {
	v, _ := cgroup.Detect(cgroup.DefaultRoot)
	return v
}

func wait(t *testing.T, d *Driver, id string) *drivers.ExitResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := d.WaitTask(ctx, id)
	if err != nil {
		t.Fatalf("WaitTask: %v", err)
	}
	return res
}

func TestExitCodeAndLogs(t *testing.T) {
	d := newTestDriver(t)
	cfg := taskConfig(t, "echo", api.Resources{MemoryBytes: 64 << 20}, "sh", "-c", `echo "$GREETING out"; echo err >&2; exit 3`)
	h, err := d.StartTask(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	res := wait(t, d, h.ID)
	if res.ExitCode != 3 || res.OOMKilled || res.Signal != 0 {
		t.Errorf("result = %+v, want exit 3", res)
	}
	if err := d.DestroyTask(h.ID); err != nil {
		t.Fatal(err)
	}
	out, _ := os.ReadFile(filepath.Join(cfg.TaskDir, "stdout.log"))
	errOut, _ := os.ReadFile(filepath.Join(cfg.TaskDir, "stderr.log"))
	if string(out) != "hello out\n" || string(errOut) != "err\n" {
		t.Errorf("stdout %q stderr %q", out, errOut)
	}
	for _, dir := range h.Cgroups {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("cgroup %s left after destroy", dir)
		}
	}
}

func TestMissingCommandReported(t *testing.T) {
	d := newTestDriver(t)
	cfg := taskConfig(t, "nope", api.Resources{}, "/does/not/exist")
	h, err := d.StartTask(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	res := wait(t, d, h.ID)
	d.DestroyTask(h.ID)
	errOut, _ := os.ReadFile(filepath.Join(cfg.TaskDir, "stderr.log"))
	if res.ExitCode != 127 || !strings.Contains(string(errOut), "/does/not/exist") {
		t.Errorf("result %+v stderr %q", res, errOut)
	}
}

func TestOOMKilledUnderMemoryLimit(t *testing.T) {
	d := newTestDriver(t)
	cfg := taskConfig(t, "hog", api.Resources{MemoryBytes: 32 << 20},
		"sh", "-c", `x=$(head -c 200000000 /dev/zero | tr '\0' a); echo survived`)
	h, err := d.StartTask(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	res := wait(t, d, h.ID)
	d.DestroyTask(h.ID)
	if !res.OOMKilled || res.MemoryMax != 32<<20 {
		t.Fatalf("result = %+v, want OOM killed with a 32MiB limit", res)
	}
	if got, want := res.Describe(), "OOM killed (memory limit 32MiB)"; got != want {
		t.Errorf("Describe = %q, want %q", got, want)
	}
}

// TestCloseEndsEveryGoroutine: the monitors of the driver's tasks end when
// it closes (issue 17) while the tasks run on; a new driver re-attaches.
func TestCloseEndsEveryGoroutine(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for cgroups")
	}
	baseline := runtime.NumGoroutine()
	d := newTestDriver(t)
	var handles []*drivers.TaskHandle
	for _, name := range []string{"one", "two"} {
		cfg := taskConfig(t, name, api.Resources{}, "sleep", "300")
		h, err := d.StartTask(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		handles = append(handles, h)
	}
	d.Close()
	driverstest.NoGoroutinesLeft(t, baseline, 5*time.Second)
	again := newTestDriver(t)
	for _, h := range handles {
		if syscall.Kill(h.PID, 0) != nil {
			t.Fatalf("task %s ended with its driver", h.ID)
		}
		if err := again.RecoverTask(h); err != nil {
			t.Fatal(err)
		}
		if err := again.StopTask(h.ID, time.Second); err != nil {
			t.Fatal(err)
		}
		again.DestroyTask(h.ID)
	}
}
