package containerd

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
	"github.com/strata-dev/strata/internal/agent/drivers/containerd/ctrtest"
)

// TestResizeContainerInPlace: a running container gets new CPU and memory
// limits through containerd, keeping its pid; a memory limit below what
// it holds, or another resource, is refused and changes nothing.
func TestResizeContainerInPlace(t *testing.T) {
	e := newEnv(t)
	archive := ctrtest.BusyboxArchive(t)
	d := e.driver()
	b := newTask(t, ArchivePrefix+archive, "sh", "-c", `head -c 25165824 /dev/zero > /tmp/ballast && touch /local/ready && exec sleep 300`).
		mem(64 << 20).cpu(200)
	cfg := b.build()
	h := start(t, d, cfg)
	t.Cleanup(func() { d.StopTask(cfg.ID, 0) })
	eventually(t, "the container filled its /tmp", func() bool {
		_, err := os.Stat(filepath.Join(cfg.TaskDir, "local", "ready"))
		return err == nil
	})
	rel := cgroup.TaskRef{AllocID: cfg.AllocID, Task: cfg.Name}.Rel(e.parent)
	read := func(controller, v1, v2 string) string {
		path := filepath.Join(cgroup.DefaultRoot, rel, v2)
		if d.version == cgroup.V1 {
			path = filepath.Join(cgroup.DefaultRoot, controller, rel, v1)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	want := func(quota string, memory int64) {
		t.Helper()
		if got := read("cpu", "cpu.cfs_quota_us", "cpu.max"); !strings.HasPrefix(got, quota) {
			t.Errorf("cpu quota %q, want %q", got, quota)
		}
		if got := read("memory", "memory.limit_in_bytes", "memory.max"); got != fmt.Sprint(memory) {
			t.Errorf("memory limit %q, want %d", got, memory)
		}
	}
	up := api.Resources{CPUMilli: 1500, MemoryBytes: 128 << 20}
	if err := d.Resize(context.Background(), cfg, up); err != nil {
		t.Fatal(err)
	}
	cfg.Resources = up
	want("150000", 128<<20)
	if err := d.Resize(context.Background(), cfg, api.Resources{CPUMilli: 1500, MemoryBytes: 16 << 20}); !errors.Is(err, drivers.ErrResizeBelowUsage) {
		t.Errorf("below what it holds: %v, want ErrResizeBelowUsage", err)
	}
	if err := d.Resize(context.Background(), cfg, api.Resources{CPUMilli: 1500, MemoryBytes: 128 << 20, NetMbps: 10}); !errors.Is(err, drivers.ErrResizeUnsupported) {
		t.Errorf("another resource: %v, want ErrResizeUnsupported", err)
	}
	want("150000", 128<<20)
	if err := syscall.Kill(h.PID, 0); err != nil {
		t.Fatalf("the container's pid %d is gone after its resizes: %v", h.PID, err)
	}
	if err := d.StopTask(cfg.ID, time.Second); err != nil {
		t.Fatal(err)
	}
}
