package exec

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
)

// newNamespacedCheckpointDriver is newCheckpointDriver starting tasks as the
// driver does by default: each under an init in its own pid, mount, uts,
// ipc and cgroup namespaces.
func newNamespacedCheckpointDriver(t *testing.T) *Driver {
	d := newCheckpointDriver(t)
	d.cfg.Checkpointable = false
	return d
}

// procState is the state letter of /proc/<pid>/stat ("T": stopped).
func procState(t *testing.T, pid int) string {
	t.Helper()
	stat, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if i := strings.LastIndexByte(string(stat), ')'); i > 0 {
		if f := strings.Fields(string(stat)[i+1:]); len(f) > 0 {
			return f[0]
		}
	}
	return ""
}

// reportingCounter is counterScript that, on SIGUSR1, writes to stderr what
// it sees of its isolation (as TestTaskRunsConfinedByDefault checks it).
const reportingCounter = `trap 'echo "cgroup=$(cut -d: -f3 /proc/self/cgroup | sort -u | tr -d "\n")" >&2
echo "pids=$(ls -d /proc/[0-9]* | wc -l)" >&2
echo "tasks=$(ls "$TASKS_ROOT" 2>/dev/null | wc -l)" >&2
(echo x > /sys/fs/cgroup/pids/pids.max || echo x > /sys/fs/cgroup/pids.max) 2>/dev/null || echo "cgroupwrite=denied" >&2
echo "end" >&2' USR1
` + counterScript

// isolationReport signals the counter and returns what it reported last.
func isolationReport(t *testing.T, taskDir string, pid int) map[string]string {
	t.Helper()
	log := filepath.Join(taskDir, "stderr.log")
	os.Remove(log + ".mark")
	data, _ := os.ReadFile(log)
	seen := len(data)
	if err := syscall.Kill(pid, syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		data, _ = os.ReadFile(log)
		if len(data) > seen && strings.Contains(string(data[seen:]), "end\n") {
			kv := map[string]string{}
			for _, l := range strings.Split(string(data[seen:]), "\n") {
				if k, v, ok := strings.Cut(l, "="); ok {
					kv[k] = v
				}
			}
			return kv
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no isolation report from pid %d (stderr: %q)", pid, data)
	return nil
}

// checkIsolated checks a task's report: its own cgroup namespace, pid
// namespace and read-only cgroups, and no other task's directory.
func checkIsolated(t *testing.T, when string, kv map[string]string) {
	t.Helper()
	if kv["cgroup"] != "/" || kv["cgroupwrite"] != "denied" || kv["tasks"] != "1" {
		t.Errorf("%s: the task sees %v, want cgroup=/ cgroupwrite=denied tasks=1 (its own directory only)", when, kv)
	}
	if n, _ := strconv.Atoi(kv["pids"]); n < 2 || n > 8 {
		t.Errorf("%s: the task sees %s processes, want its own namespace's few", when, kv["pids"])
	}
}

// checkCounting resumes nothing: it waits for the counter in taskDir to
// pass atLeast and checks that every number follows the one before.
func checkCounting(t *testing.T, taskDir string, atLeast int, want []int) []int {
	t.Helper()
	waitCount(t, taskDir, atLeast)
	all := append(append([]int(nil), want...), counts(t, taskDir)...)
	for i := 1; i < len(all); i++ {
		if all[i] != all[i-1]+1 {
			t.Fatalf("the count went %d -> %d at line %d: the restored task did not go on from its memory", all[i-1], all[i], i)
		}
	}
	return all
}

// TestCheckpointNamespacedTaskKeepsMemory dumps a counter that runs as the
// driver starts every task (under an init, in its own pid, mount, uts, ipc
// and cgroup namespaces), restores it stopped with the same driver, resumes
// it, checks it counts on from its memory and is as isolated as before;
// then dumps the restored task again and restores it running on a second
// driver with another tasks root and cgroup parent, as on another node.
func TestCheckpointNamespacedTaskKeepsMemory(t *testing.T) {
	d := newNamespacedCheckpointDriver(t)
	cfg := rootTask(t, "counter", api.Resources{MemoryBytes: 64 << 20, CPUMilli: 200}, "sh", "-c", reportingCounter)
	cfg.Env["TASKS_ROOT"] = filepath.Dir(filepath.Dir(cfg.TaskDir))
	h, err := d.StartTask(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if h.InitPID <= 0 {
		t.Fatalf("task handle %+v has no init: not a namespaced task", h)
	}
	waitCount(t, cfg.TaskDir, 10)
	checkIsolated(t, "started", isolationReport(t, cfg.TaskDir, h.PID))
	img := filepath.Join(cfg.TaskDir, "image")
	ck, err := d.CheckpointTask(context.Background(), h.ID, img, false)
	if err != nil {
		t.Fatal(err)
	}
	if ck.Bytes <= 0 {
		t.Errorf("checkpoint = %+v, want a size", ck)
	}
	if res := wait(t, d, h.ID); res.Signal != 9 {
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
	if h2.InitPID <= 0 || h2.PID <= 0 || h2.PID == h2.InitPID {
		t.Fatalf("restored handle %+v, want the init and the task", h2)
	}
	hostNS, _ := os.Readlink("/proc/self/ns/pid")
	if ns, _ := os.Readlink(filepath.Join("/proc", strconv.Itoa(h2.PID), "ns", "pid")); ns == hostNS || ns == "" {
		t.Errorf("the restored task is in pid namespace %q, the host's is %q", ns, hostNS)
	}
	for _, pid := range []int{h2.InitPID, h2.PID} {
		if st := procState(t, pid); st != "T" {
			t.Errorf("restored pid %d state %q, want stopped (T) until resumed", pid, st)
		}
	}
	time.Sleep(100 * time.Millisecond) // a stopped task must not count meanwhile
	if got := lastCount(t, cfg.TaskDir); got != before {
		t.Errorf("a stopped task counted: %d -> %d", before, got)
	}
	if err := d.ResumeTask(h2.ID); err != nil {
		t.Fatal(err)
	}
	checkCounting(t, cfg.TaskDir, before+5, nil)
	checkIsolated(t, "restored", isolationReport(t, cfg.TaskDir, h2.PID))

	// Again, from the restored task, onto another "node".
	img2 := filepath.Join(t.TempDir(), "image2")
	if _, err := d.CheckpointTask(context.Background(), h2.ID, img2, false); err != nil {
		t.Fatalf("dump of the restored task: %v", err)
	}
	wait(t, d, h2.ID)
	d.DestroyTask(h2.ID)
	last := lastCount(t, cfg.TaskDir)

	d2 := newNamespacedCheckpointDriver(t)
	root2 := filepath.Join(t.TempDir(), "allocs")
	d2.cfg.TasksRoot = root2
	d2.cfg.CgroupParent = "strata-test/ns-ckpt-" + strconv.FormatInt(time.Now().UnixNano(), 10)
	cfg2 := *cfg
	cfg2.TaskDir = filepath.Join(root2, cfg.AllocID, cfg.Name)
	if err := os.MkdirAll(cfg2.TaskDir, 0o755); err != nil {
		t.Fatal(err)
	}
	h3, err := d2.RestoreTask(context.Background(), &cfg2, img2, false)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		d2.StopTask(h3.ID, time.Second)
		d2.DestroyTask(h3.ID)
	}()
	if !strings.Contains(h3.Cgroup, d2.cfg.CgroupParent) {
		t.Errorf("restored into cgroup %s, want one under %s", h3.Cgroup, d2.cfg.CgroupParent)
	}
	checkCounting(t, cfg2.TaskDir, last+5, []int{last})
	checkIsolated(t, "restored on the second driver", isolationReport(t, cfg2.TaskDir, h3.PID))
}

// TestCheckpointNamespacedLeaveRunning checkpoints a namespaced task
// without stopping it.
func TestCheckpointNamespacedLeaveRunning(t *testing.T) {
	d := newNamespacedCheckpointDriver(t)
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
	img := filepath.Join(cfg.TaskDir, "ck")
	if _, err := d.CheckpointTask(context.Background(), h.ID, img, true); err != nil {
		t.Fatal(err)
	}
	waitCount(t, cfg.TaskDir, n+5) // still counting
	for _, f := range []string{"inventory.img", layoutFile} {
		if _, err := os.Stat(filepath.Join(img, f)); err != nil {
			t.Errorf("no %s in the image: %v", f, err)
		}
	}
}

// TestCheckpointNamespacedIsolatedNetwork: a task with a network namespace
// of its own (network: isolated) moves with it: restored in a new network
// namespace, not the host's, counting on.
func TestCheckpointNamespacedIsolatedNetwork(t *testing.T) {
	d := newNamespacedCheckpointDriver(t)
	cfg := rootTask(t, "counter", api.Resources{MemoryBytes: 64 << 20}, "sh", "-c", counterScript)
	cfg.Task.Network = "isolated"
	h, err := d.StartTask(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	waitCount(t, cfg.TaskDir, 3)
	img := filepath.Join(cfg.TaskDir, "ck")
	if _, err := d.CheckpointTask(context.Background(), h.ID, img, false); err != nil {
		t.Fatal(err)
	}
	wait(t, d, h.ID)
	d.DestroyTask(h.ID)
	before := lastCount(t, cfg.TaskDir)
	h2, err := d.RestoreTask(context.Background(), cfg, img, false)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		d.StopTask(h2.ID, time.Second)
		d.DestroyTask(h2.ID)
	}()
	hostNet, _ := os.Readlink("/proc/self/ns/net")
	if ns, _ := os.Readlink(filepath.Join("/proc", strconv.Itoa(h2.PID), "ns", "net")); ns == "" || ns == hostNet {
		t.Errorf("the restored task is in network namespace %q, the host's is %q", ns, hostNet)
	}
	checkCounting(t, cfg.TaskDir, before+5, nil)
}
