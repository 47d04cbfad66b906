package exec

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/cgroup"
	"github.com/strata-dev/strata/internal/agent/drivers"
)

// cgroupValue reads a file of the task's group in controller's hierarchy
// (v1) or the unified one (v2).
func cgroupValue(t *testing.T, cfg *drivers.TaskConfig, controller, v1File, v2File string) string {
	t.Helper()
	rel := cgroup.TaskRef{AllocID: cfg.AllocID, Task: cfg.Name}.Rel(cgroup.Parent)
	path := filepath.Join(cgroup.DefaultRoot, rel, v2File)
	if mustDetect() == cgroup.V1 {
		path = filepath.Join(cgroup.DefaultRoot, controller, rel, v1File)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// TestResizeInPlace: a running task gets new CPU and memory limits in its
// cgroups, keeping its pid; resizing to what it has changes nothing; a
// memory limit below what it holds, another resource, or a pinned task's
// CPU are refused and change nothing.
func TestResizeInPlace(t *testing.T) {
	d := newTestDriver(t)
	// 24 MiB in the task's private /tmp: shared memory it cannot give back.
	cfg := taskConfig(t, "resized", api.Resources{CPUMilli: 200, MemoryBytes: 64 << 20}, "sh", "-c",
		`head -c 25165824 /dev/zero > /tmp/ballast && touch "$STRATA_TASK_DIR/ready" && exec sleep 300`)
	h := start(t, d, cfg)
	deadline := time.Now().Add(10 * time.Second)
	for !exists(filepath.Join(cfg.TaskDir, "local", "ready")) {
		if time.Now().After(deadline) {
			t.Fatal("the task did not fill its /tmp")
		}
		time.Sleep(20 * time.Millisecond)
	}
	quota := func() string { return cgroupValue(t, cfg, "cpu", "cpu.cfs_quota_us", "cpu.max") }
	memory := func() string { return cgroupValue(t, cfg, "memory", "memory.limit_in_bytes", "memory.max") }
	want := func(q, m string) {
		t.Helper()
		if mustDetect() == cgroup.V2 {
			q = strings.Fields(q)[0]
		}
		if got := quota(); !strings.HasPrefix(got, q) {
			t.Errorf("cpu quota %q, want %q", got, q)
		}
		if got := memory(); got != m {
			t.Errorf("memory limit %q, want %q", got, m)
		}
	}

	for _, step := range []struct {
		name string
		res  api.Resources
		q, m string
	}{
		{"up", api.Resources{CPUMilli: 1500, MemoryBytes: 128 << 20}, "150000", fmt.Sprint(128 << 20)},
		{"the same again", api.Resources{CPUMilli: 1500, MemoryBytes: 128 << 20}, "150000", fmt.Sprint(128 << 20)},
		{"down, above what it holds", api.Resources{CPUMilli: 300, MemoryBytes: 48 << 20}, "30000", fmt.Sprint(48 << 20)},
	} {
		if err := d.Resize(context.Background(), cfg, step.res); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		cfg.Resources = step.res // as the agent does
		want(step.q, step.m)
	}
	for _, bad := range []struct {
		name string
		res  api.Resources
		err  error
	}{
		{"below what it holds", api.Resources{CPUMilli: 300, MemoryBytes: 16 << 20}, drivers.ErrResizeBelowUsage},
		{"another resource", api.Resources{CPUMilli: 300, MemoryBytes: 48 << 20, GPUs: 1}, drivers.ErrResizeUnsupported},
	} {
		if err := d.Resize(context.Background(), cfg, bad.res); !errors.Is(err, bad.err) {
			t.Errorf("%s: %v, want %v", bad.name, err, bad.err)
		}
		want("30000", fmt.Sprint(48<<20))
	}
	pinned := *cfg
	pinned.CPUs = []int{0}
	if err := d.Resize(context.Background(), &pinned, api.Resources{CPUMilli: 900, MemoryBytes: 48 << 20}); !errors.Is(err, drivers.ErrResizeUnsupported) {
		t.Errorf("a pinned task's CPU: %v, want ErrResizeUnsupported", err)
	}
	if err := syscall.Kill(h.PID, 0); err != nil {
		t.Fatalf("the task's pid %d is gone after its resizes: %v", h.PID, err)
	}
	if err := d.StopTask(h.ID, time.Second); err != nil {
		t.Fatal(err)
	}
	if r := wait(t, d, h.ID); r.OOMKilled {
		t.Errorf("the task was OOM-killed: %+v", r)
	}
	if err := d.Resize(context.Background(), cfg, cfg.Resources); !errors.Is(err, drivers.ErrTaskNotFound) {
		t.Errorf("an ended task: %v, want ErrTaskNotFound", err)
	}
}
