package exec

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/criu"
	"github.com/strata-dev/strata/internal/agent/drivers"
)

// newCheckpointDriver is newTestDriver with a working criu ($STRATA_CRIU or
// on PATH); it skips, saying why, where there is none.
func newCheckpointDriver(t *testing.T) *Driver {
	t.Helper()
	d := newTestDriver(t)
	info := criu.Probe(context.Background(), os.Getenv("STRATA_CRIU"))
	if !info.Available {
		t.Skipf("no working criu: %s (.ci/build-criu builds one; set STRATA_CRIU)", info.Reason)
	}
	d.cfg.CriuPath = info.Path
	d.cfg.Checkpointable = true
	// criu reads a task's rlimits with prlimit, which needs CAP_SYS_RESOURCE
	// for a task of another user; root in this CI's container lacks it, so
	// the tasks here run as root.
	d.cfg.AllowRootTasks = true
	return d
}

// rootTask is taskConfig for a task that runs as root (see
// newCheckpointDriver).
func rootTask(t *testing.T, name string, res api.Resources, cmd ...string) *drivers.TaskConfig {
	cfg := taskConfig(t, name, res, cmd...)
	cfg.Task.User = "root"
	return cfg
}

// counterScript prints 1, 2, 3, ... every 20ms from a shell variable: its
// only memory of where it is is the process's own memory.
const counterScript = `i=0; while :; do i=$((i+1)); echo $i; sleep 0.02; done`

// lastCount is the last complete number in the task's stdout log.
func lastCount(t *testing.T, taskDir string) int {
	t.Helper()
	data, _ := os.ReadFile(filepath.Join(taskDir, "stdout.log"))
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	n, _ := strconv.Atoi(lines[len(lines)-1])
	return n
}

// counts returns every number in the task's stdout log, in order.
func counts(t *testing.T, taskDir string) []int {
	t.Helper()
	data, _ := os.ReadFile(filepath.Join(taskDir, "stdout.log"))
	var out []int
	for _, l := range strings.Fields(string(data)) {
		n, err := strconv.Atoi(l)
		if err != nil {
			t.Fatalf("stdout holds %q, not a count", l)
		}
		out = append(out, n)
	}
	return out
}

func waitCount(t *testing.T, taskDir string, atLeast int) int {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if n := lastCount(t, taskDir); n >= atLeast {
			return n
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("the counter did not reach %d (log: %v)", atLeast, counts(t, taskDir))
	return 0
}

// TestCheckpointRestoreKeepsMemory dumps a counter (criu kills it), restores
// it stopped under a new shim and cgroup, resumes it, and checks that it
// counts on from where it was, into the same log, with its limits.
func TestCheckpointRestoreKeepsMemory(t *testing.T) {
	d := newCheckpointDriver(t)
	cfg := rootTask(t, "counter", api.Resources{MemoryBytes: 64 << 20, CPUMilli: 200}, "sh", "-c", counterScript)
	h, err := d.StartTask(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	quota := cpuQuota(t, h.Cgroups)
	waitCount(t, cfg.TaskDir, 10)
	img := filepath.Join(cfg.TaskDir, "image")
	ck, err := d.CheckpointTask(context.Background(), h.ID, img, false)
	if err != nil {
		t.Fatal(err)
	}
	if ck.Bytes <= 0 || ck.Duration <= 0 {
		t.Errorf("checkpoint = %+v, want a size and a duration", ck)
	}
	res := wait(t, d, h.ID) // criu killed the tree after the dump
	if res.Signal != 9 {
		t.Errorf("after the dump the task ended with %+v, want SIGKILL", res)
	}
	if err := d.DestroyTask(h.ID); err != nil {
		t.Fatal(err)
	}
	before := lastCount(t, cfg.TaskDir)

	h2, err := d.RestoreTask(context.Background(), cfg, img, true)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		d.StopTask(h2.ID, time.Second)
		d.DestroyTask(h2.ID)
	}()
	if h2.PID != h.PID {
		t.Errorf("restored pid %d, want the dumped task's pid %d", h2.PID, h.PID)
	}
	stat, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(h2.PID), "stat"))
	if f := strings.Fields(string(stat)); len(f) < 3 || f[2] != "T" {
		t.Errorf("restored task state %v, want stopped (T) until resumed", f)
	}
	if got := lastCount(t, cfg.TaskDir); got != before {
		t.Errorf("a stopped task counted: %d -> %d", before, got)
	}
	e, err := d.tasks.Get(h2.ID)
	if err != nil {
		t.Fatal(err)
	}
	inGroup, err := e.Data.group.Procs()
	if err != nil || len(inGroup) == 0 {
		t.Fatalf("restored task's cgroup holds %v (%v), want its processes", inGroup, err)
	}
	if got := cpuQuota(t, h2.Cgroups); got == quota {
		t.Errorf("the restoring task is under its cpu quota %q: criu's restorer runs at its pace", got)
	}
	if err := d.ResumeTask(h2.ID); err != nil {
		t.Fatal(err)
	}
	if got := cpuQuota(t, h2.Cgroups); got != quota {
		t.Errorf("after resume the cpu quota is %q, want the task's %q", got, quota)
	}
	waitCount(t, cfg.TaskDir, before+5)
	all := counts(t, cfg.TaskDir)
	for i := 1; i < len(all); i++ {
		if all[i] != all[i-1]+1 {
			t.Fatalf("the count went %d -> %d at line %d: the restored task did not go on from its memory", all[i-1], all[i], i)
		}
	}
}

// TestCheckpointLeaveRunning checkpoints a task without stopping it.
func TestCheckpointLeaveRunning(t *testing.T) {
	d := newCheckpointDriver(t)
	cfg := rootTask(t, "counter", api.Resources{MemoryBytes: 64 << 20}, "sh", "-c", counterScript)
	h, err := d.StartTask(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		d.StopTask(h.ID, time.Second)
		d.DestroyTask(h.ID)
	}()
	n := waitCount(t, cfg.TaskDir, 3)
	if _, err := d.CheckpointTask(context.Background(), h.ID, filepath.Join(cfg.TaskDir, "ck"), true); err != nil {
		t.Fatal(err)
	}
	waitCount(t, cfg.TaskDir, n+5) // still counting
	if _, err := os.Stat(filepath.Join(cfg.TaskDir, "ck", "inventory.img")); err != nil {
		t.Errorf("no image: %v", err)
	}
}

// TestRestoreFailureIsReported: a damaged image is refused with criu's own
// reason, and leaves no cgroup behind.
func TestRestoreFailureIsReported(t *testing.T) {
	d := newCheckpointDriver(t)
	cfg := rootTask(t, "broken", api.Resources{MemoryBytes: 64 << 20}, "sh", "-c", counterScript)
	img := filepath.Join(cfg.TaskDir, "image")
	os.MkdirAll(img, 0o700)
	os.WriteFile(filepath.Join(img, criu.StdioFile), []byte(`{}`), 0o600)
	os.WriteFile(filepath.Join(img, "inventory.img"), []byte("garbage"), 0o600)
	_, err := d.RestoreTask(context.Background(), cfg, img, true)
	if err == nil || !strings.Contains(err.Error(), "restore failed") {
		t.Fatalf("RestoreTask of a damaged image = %v, want a restore failure", err)
	}
	if d.tasks.Has(cfg.ID) {
		t.Error("the driver still tracks the failed restore")
	}
}

// cpuQuota reads the CPU quota of a task's cgroups (v1 or v2).
func cpuQuota(t *testing.T, dirs []string) string {
	t.Helper()
	for _, dir := range dirs {
		for _, f := range []string{"cpu.max", "cpu.cfs_quota_us"} {
			if data, err := os.ReadFile(filepath.Join(dir, f)); err == nil {
				return strings.TrimSpace(string(data))
			}
		}
	}
	t.Fatalf("no cpu quota file in %v", dirs)
	return ""
}
