package exec

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/drivers"
)

// lostTask starts a `sleep` task under a driver with a cgroup parent of
// its own, then deletes its task directory's files (run.json included), as
// a lost data dir does, and returns a fresh driver with no record of it.
func lostTask(t *testing.T) (*Driver, string, *drivers.TaskHandle) {
	t.Helper()
	first := newTestDriver(t)
	parent := fmt.Sprintf("strata-test/ns-orphans-%d", time.Now().UnixNano())
	first.cfg.CgroupParent = parent
	t.Cleanup(func() { removeTestParent(first.cfg.CgroupRoot, parent) })
	allocsDir := filepath.Join(t.TempDir(), "allocs")
	allocID := fmt.Sprintf("alloc-%d", time.Now().UnixNano())
	cfg := &drivers.TaskConfig{
		ID: allocID + "/t", AllocID: allocID, Name: "t",
		Task:    &api.Task{Name: "t", Command: []string{"sleep", "300"}},
		TaskDir: filepath.Join(allocsDir, allocID, "t"), NUMANode: -1,
	}
	if err := os.MkdirAll(cfg.TaskDir, 0o700); err != nil {
		t.Fatal(err)
	}
	h, err := first.StartTask(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { first.StopTask(h.ID, 0); first.DestroyTask(h.ID) })
	if h.InitPID == 0 || h.InitPID == h.PID {
		t.Fatalf("handle %+v: want the task and its namespace's init apart", h)
	}
	for _, f := range []string{runFile, specFile} {
		if err := os.Remove(filepath.Join(cfg.TaskDir, f)); err != nil {
			t.Fatal(err)
		}
	}
	second, err := New(first.cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { second.Close() })
	return second, allocsDir, h
}

func findOrphan(t *testing.T, d *Driver, allocsDir string, h *drivers.TaskHandle) Orphan {
	t.Helper()
	orphans, err := d.FindOrphans(allocsDir, func(string, string) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range orphans {
		if o.ID() == h.ID {
			return o
		}
	}
	t.Fatalf("orphans %+v: %s missing", orphans, h.ID)
	return Orphan{}
}

// TestFindOrphansTellsTheTaskFromItsInit: with run.json gone, the orphan's
// task is found on the host as the process of its cgroup that its
// namespace's init (the shim's child, outside the cgroup) started, and the
// handle names that init, so an adopted task stops by SIGTERM through it.
func TestFindOrphansTellsTheTaskFromItsInit(t *testing.T) {
	d, allocsDir, h := lostTask(t)
	o := findOrphan(t, d, allocsDir, h)
	if !o.ShimAlive || o.Handle.ShimPID != h.ShimPID || o.Handle.PID != h.PID || o.Handle.InitPID != h.InitPID {
		t.Fatalf("orphan handle: shim %d (alive %v), task %d, init %d; want shim %d, task %d, init %d",
			o.Handle.ShimPID, o.ShimAlive, o.Handle.PID, o.Handle.InitPID, h.ShimPID, h.PID, h.InitPID)
	}
	if err := d.RecoverTask(&o.Handle); err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	if err := d.StopTask(h.ID, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(begin); took > 10*time.Second {
		t.Errorf("the adopted task took %s to stop, want a prompt SIGTERM", took)
	}
	if alive(h.PID) || alive(h.InitPID) {
		t.Errorf("after stop: task alive %v, init alive %v", alive(h.PID), alive(h.InitPID))
	}
}

// TestStopOrphanEndsTaskInitAndShim: StopOrphan of a lost namespaced task
// ends the task, its init and its shim, and removes its cgroups.
func TestStopOrphanEndsTaskInitAndShim(t *testing.T) {
	d, allocsDir, h := lostTask(t)
	o := findOrphan(t, d, allocsDir, h)
	if o.Handle.PID != h.PID {
		t.Errorf("orphan task pid %d, want %d", o.Handle.PID, h.PID)
	}
	if err := d.StopOrphan(o, time.Second); err != nil {
		t.Fatal(err)
	}
	if !waitFor(t, "task, init and shim gone", 10*time.Second, func() bool {
		return !alive(h.PID) && !alive(h.InitPID) && !alive(h.ShimPID)
	}) {
		t.Errorf("after StopOrphan: task %v, init %v, shim %v alive", alive(h.PID), alive(h.InitPID), alive(h.ShimPID))
	}
	for _, dir := range h.Cgroups {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("cgroup %s left behind (%v)", dir, err)
		}
	}
}
