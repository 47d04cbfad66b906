package containerd

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/internal/agent/cgroup"
	"github.com/strata-dev/strata/internal/agent/criu"
	"github.com/strata-dev/strata/internal/agent/drivers"
	"github.com/strata-dev/strata/internal/agent/drivers/containerd/ctrtest"
)

// withCriu makes the env's drivers checkpoint with a working criu
// ($STRATA_CRIU or on PATH); it skips, saying why, where there is none.
func (e *env) withCriu() *env {
	e.t.Helper()
	info := criu.Probe(context.Background(), os.Getenv("STRATA_CRIU"))
	if !info.Available {
		e.t.Skipf("no working criu: %s (.ci/build-criu builds one; set STRATA_CRIU)", info.Reason)
	}
	e.criu = info.Path
	return e
}

// target opens a driver as another node would have it on the same daemon:
// its own containerd namespace and cgroup parent; it returns the driver
// and its namespace.
func (e *env) target() (*Driver, string) {
	e.t.Helper()
	ns := ctrtest.Namespace(e.t, e.socket)
	return (&env{t: e.t, socket: e.socket, ns: ns, parent: e.parent + "-target", clock: e.clock, criu: e.criu}).driver(), ns
}

// counterScript prints 1, 2, 3, ... every 20ms from a shell variable: its
// only memory of where it is is the process's own memory.
const counterScript = `i=0; while :; do i=$((i+1)); echo $i; sleep 0.02; done`

// counts returns every number in the task's stdout log, in order.
func counts(t *testing.T, taskDir string) []int {
	t.Helper()
	var out []int
	for _, l := range strings.Fields(readLog(t, taskDir, "stdout")) {
		n, err := strconv.Atoi(l)
		if err != nil {
			t.Fatalf("stdout holds %q, not a count", l)
		}
		out = append(out, n)
	}
	return out
}

func lastCount(t *testing.T, taskDir string) int {
	c := counts(t, taskDir)
	if len(c) == 0 {
		return 0
	}
	return c[len(c)-1]
}

// TestContainerMovesWithItsMemory checkpoints a counting container on one
// driver (the container ends), restores it stopped under another driver
// (another containerd namespace, task directory and cgroup parent, as on
// another node), checks that it stays stopped until resumed, and that it
// then counts on from where it was.
func TestContainerMovesWithItsMemory(t *testing.T) {
	e := newEnv(t).withCriu()
	archive := ctrtest.BusyboxArchive(t)
	src := e.driver()
	if !src.CanCheckpoint() {
		t.Fatal("the driver cannot checkpoint with a working criu")
	}
	cfg := newTask(t, ArchivePrefix+archive, "sh", "-c", counterScript).build()
	start(t, src, cfg)
	eventually(t, "the counter to pass 20", func() bool { return lastCount(t, cfg.TaskDir) >= 20 })

	dir := filepath.Join(t.TempDir(), "image")
	ck, err := src.CheckpointTask(context.Background(), cfg.ID, dir, false)
	if err != nil {
		t.Fatalf("CheckpointTask: %v", err)
	}
	if ck.Bytes <= 0 {
		t.Fatalf("checkpoint of %d bytes", ck.Bytes)
	}
	wait(t, src, cfg.ID) // the dump ends the container
	before := lastCount(t, cfg.TaskDir)

	dst, _ := e.target()
	moved := *cfg
	moved.TaskDir = filepath.Join(t.TempDir(), "main")
	os.MkdirAll(moved.TaskDir, 0o755)
	h, err := dst.RestoreTask(context.Background(), &moved, dir, true)
	if err != nil {
		t.Fatalf("RestoreTask: %v", err)
	}
	t.Cleanup(func() { dst.StopTask(moved.ID, time.Second); dst.DestroyTask(moved.ID) })
	if h.PID <= 0 {
		t.Fatalf("restored task has pid %d", h.PID)
	}
	if _, err := os.Stat(filepath.Join(moved.TaskDir, criuConfigName)); !os.IsNotExist(err) {
		t.Fatalf("the restore's criu configuration outlived it: %v", err)
	}
	time.Sleep(300 * time.Millisecond)
	if c := counts(t, moved.TaskDir); len(c) != 0 {
		t.Fatalf("the task counted while restored stopped: %v", c)
	}
	if err := dst.ResumeTask(moved.ID); err != nil {
		t.Fatalf("ResumeTask: %v", err)
	}
	eventually(t, "the restored counter to count", func() bool { return len(counts(t, moved.TaskDir)) >= 5 })
	got := counts(t, moved.TaskDir)
	if got[0] <= before-1 || got[0] > before+2 {
		t.Fatalf("the restored counter began at %d; the source's last count was %d", got[0], before)
	}
	for i := 1; i < len(got); i++ {
		if got[i] != got[i-1]+1 {
			t.Fatalf("the restored counter skipped: %v", got)
		}
	}
}

// TestAbortedMoveRestoresOnTheSource restores a dumped container
// on the driver that dumped it (a move that was aborted), running. The
// container has a network namespace of its own ("isolated"), which criu
// dumps and restores too (it locks the network with iptables meanwhile).
func TestAbortedMoveRestoresOnTheSource(t *testing.T) {
	e := newEnv(t).withCriu()
	archive := ctrtest.BusyboxArchive(t)
	d := e.driver()
	cfg := newTask(t, ArchivePrefix+archive, "sh", "-c", counterScript).build()
	cfg.Task.Network = "isolated"
	start(t, d, cfg)
	eventually(t, "the counter to pass 10", func() bool { return lastCount(t, cfg.TaskDir) >= 10 })
	dir := filepath.Join(t.TempDir(), "image")
	if _, err := d.CheckpointTask(context.Background(), cfg.ID, dir, false); err != nil {
		t.Fatalf("CheckpointTask: %v", err)
	}
	wait(t, d, cfg.ID)
	before := lastCount(t, cfg.TaskDir)
	if _, err := d.RestoreTask(context.Background(), cfg, dir, false); err != nil {
		t.Fatalf("RestoreTask: %v", err)
	}
	eventually(t, "the counter to go on", func() bool { return lastCount(t, cfg.TaskDir) >= before+5 })
	c := counts(t, cfg.TaskDir)
	for i := 1; i < len(c); i++ {
		if c[i] != c[i-1]+1 {
			t.Fatalf("the counter restarted or skipped around %d: %v", c[i], c[max(0, i-3):min(len(c), i+3)])
		}
	}
}

// TestCheckpointLeavesTheContainerRunning is a checkpoint without a move:
// the container counts on, and the image is there.
func TestCheckpointLeavesTheContainerRunning(t *testing.T) {
	e := newEnv(t).withCriu()
	archive := ctrtest.BusyboxArchive(t)
	d := e.driver()
	cfg := newTask(t, ArchivePrefix+archive, "sh", "-c", counterScript).build()
	start(t, d, cfg)
	eventually(t, "the counter to pass 5", func() bool { return lastCount(t, cfg.TaskDir) >= 5 })
	dir := filepath.Join(t.TempDir(), "image")
	if _, err := d.CheckpointTask(context.Background(), cfg.ID, dir, true); err != nil {
		t.Fatalf("CheckpointTask: %v", err)
	}
	n := lastCount(t, cfg.TaskDir)
	eventually(t, "the counter to go on", func() bool { return lastCount(t, cfg.TaskDir) >= n+5 })
	if _, err := os.Stat(filepath.Join(dir, "inventory.img")); err != nil {
		t.Fatalf("no criu image: %v", err)
	}
}

// TestFailedCheckpointLeavesTheContainerRunning: a container criu will not
// dump (an established TCP connection, which a move would break) fails the
// checkpoint with criu's reason; the container counts on and no image is
// left.
func TestFailedCheckpointLeavesTheContainerRunning(t *testing.T) {
	e := newEnv(t).withCriu()
	archive := ctrtest.BusyboxArchive(t)
	d := e.driver()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			accepted <- c
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	// The host's network (the default): the connection is to the test.
	script := fmt.Sprintf(`(while :; do sleep 1; done) | nc 127.0.0.1 %d & %s`, port, counterScript)
	cfg := newTask(t, ArchivePrefix+archive, "sh", "-c", script).build()
	start(t, d, cfg)
	select {
	case c := <-accepted:
		defer c.Close()
	case <-time.After(20 * time.Second):
		t.Fatal("the container did not connect")
	}
	eventually(t, "the counter to pass 5", func() bool { return lastCount(t, cfg.TaskDir) >= 5 })
	dir := filepath.Join(t.TempDir(), "image")
	_, err = d.CheckpointTask(context.Background(), cfg.ID, dir, false)
	if err == nil || !strings.Contains(err.Error(), "TCP") {
		t.Fatalf("CheckpointTask: %v, want criu's refusal of the TCP connection", err)
	}
	if _, serr := os.Stat(dir); !os.IsNotExist(serr) {
		t.Fatalf("the failed checkpoint left %s (%v)", dir, serr)
	}
	n := lastCount(t, cfg.TaskDir)
	eventually(t, "the counter to go on", func() bool { return lastCount(t, cfg.TaskDir) >= n+5 })
}

// TestCorruptImageFailsTheRestoreAndLeavesNothing: a restore from a
// corrupt image fails with criu's reason and leaves no container, task or
// mount behind.
func TestCorruptImageFailsTheRestoreAndLeavesNothing(t *testing.T) {
	e := newEnv(t).withCriu()
	archive := ctrtest.BusyboxArchive(t)
	src := e.driver()
	cfg := newTask(t, ArchivePrefix+archive, "sh", "-c", counterScript).build()
	start(t, src, cfg)
	eventually(t, "the counter to pass 5", func() bool { return lastCount(t, cfg.TaskDir) >= 5 })
	dir := filepath.Join(t.TempDir(), "image")
	if _, err := src.CheckpointTask(context.Background(), cfg.ID, dir, false); err != nil {
		t.Fatalf("CheckpointTask: %v", err)
	}
	// Garbage where the processes' registers and state are. (Truncated
	// memory pages were tried first: criu's restorer then spun at full
	// CPU until the restore's deadline, which a transfer's digest check
	// keeps from happening in a migration.)
	cores, _ := filepath.Glob(filepath.Join(dir, "core-*.img"))
	if len(cores) == 0 {
		t.Fatal("the image has no core files")
	}
	for _, p := range cores {
		if err := os.WriteFile(p, []byte("not a criu image, not a protobuf either"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	dst, dstNS := e.target()
	moved := *cfg
	moved.TaskDir = filepath.Join(t.TempDir(), "main")
	os.MkdirAll(moved.TaskDir, 0o755)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := dst.RestoreTask(ctx, &moved, dir, true)
	if err == nil {
		dst.StopTask(moved.ID, time.Second)
		dst.DestroyTask(moved.ID)
		t.Fatal("a restore from an image without its pages succeeded")
	}
	t.Logf("restore failed as it should: %v", err)
	if log, rerr := os.ReadFile(filepath.Join(dir, criu.RestoreLog)); rerr == nil {
		lines := strings.Split(strings.TrimSpace(string(log)), "\n")
		t.Logf("restore.log tail:\n%s", strings.Join(lines[max(0, len(lines)-15):], "\n"))
	}
	if ids := ctrtest.Containers(t, e.socket, dstNS); len(ids) != 0 {
		t.Fatalf("the failed restore left containers %v", ids)
	}
	if _, err := dst.WaitTask(context.Background(), moved.ID); err == nil {
		t.Fatal("the driver tracks a task of the failed restore")
	}
	if m := mountsBelow(dir); len(m) != 0 {
		t.Fatalf("the failed restore left mounts %v", m)
	}
	rel := cgroup.TaskRef{AllocID: moved.AllocID, Task: moved.Name}.Rel(e.parent + "-target")
	left, _ := filepath.Glob(filepath.Join(cgroup.DefaultRoot, "*", rel))
	if _, err := os.Stat(filepath.Join(cgroup.DefaultRoot, rel)); err == nil {
		left = append(left, filepath.Join(cgroup.DefaultRoot, rel))
	}
	if len(left) != 0 {
		t.Fatalf("the failed restore left cgroups %v", left)
	}
	if _, err := os.Stat(filepath.Join(moved.TaskDir, criuConfigName)); !os.IsNotExist(err) {
		t.Fatalf("the failed restore left %s (%v)", criuConfigName, err)
	}
}

// TestStaleCriuConfigDoesNotStopADump: a criu.conf with leave-stopped that
// an agent died before removing (mid-restore) must not turn the next
// dump's end of the container into a stop: the container would live on,
// stopped, beside its restored copy.
func TestStaleCriuConfigDoesNotStopADump(t *testing.T) {
	e := newEnv(t).withCriu()
	archive := ctrtest.BusyboxArchive(t)
	d := e.driver()
	cfg := newTask(t, ArchivePrefix+archive, "sh", "-c", counterScript).build()
	start(t, d, cfg)
	eventually(t, "the counter to pass 5", func() bool { return lastCount(t, cfg.TaskDir) >= 5 })
	if err := os.WriteFile(filepath.Join(cfg.TaskDir, criuConfigName), []byte("leave-stopped\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := d.CheckpointTask(context.Background(), cfg.ID, filepath.Join(t.TempDir(), "image"), false); err != nil {
		t.Fatalf("CheckpointTask: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := d.WaitTask(ctx, cfg.ID); err != nil {
		t.Fatalf("the dumped container did not end: %v", err)
	}
}

// TestRestoredContainerGetsItsCPUQuotaBack: a container is restored
// without its CPU quota (criu's restorer runs under it) and gets it back
// once it runs.
func TestRestoredContainerGetsItsCPUQuotaBack(t *testing.T) {
	e := newEnv(t).withCriu()
	archive := ctrtest.BusyboxArchive(t)
	d := e.driver()
	cfg := newTask(t, ArchivePrefix+archive, "sh", "-c", counterScript).cpu(250).build()
	start(t, d, cfg)
	eventually(t, "the counter to pass 5", func() bool { return lastCount(t, cfg.TaskDir) >= 5 })
	dir := filepath.Join(t.TempDir(), "image")
	if _, err := d.CheckpointTask(context.Background(), cfg.ID, dir, false); err != nil {
		t.Fatalf("CheckpointTask: %v", err)
	}
	wait(t, d, cfg.ID)
	h, err := d.RestoreTask(context.Background(), cfg, dir, false)
	if err != nil {
		t.Fatalf("RestoreTask: %v", err)
	}
	got := cpuQuota(t, h)
	if got != "25000" && got != "25000 100000" {
		t.Fatalf("restored container's cpu quota %q, want 25000 (250m)", got)
	}
}

// cpuQuota reads the CFS quota of the task's cgroup (v1 cpu.cfs_quota_us
// or v2 cpu.max).
func cpuQuota(t *testing.T, h *drivers.TaskHandle) string {
	t.Helper()
	for _, dir := range h.Cgroups {
		for _, f := range []string{"cpu.cfs_quota_us", "cpu.max"} {
			if data, err := os.ReadFile(filepath.Join(dir, f)); err == nil {
				return strings.TrimSpace(string(data))
			}
		}
	}
	t.Fatalf("no cpu quota file in %v", h.Cgroups)
	return ""
}

// TestRestoreRefusesAnotherImage: a checkpoint restored where the task's
// image reference now names another image (an archive rewritten, a tag
// moved) is refused: its memory and writable layer belong to the first.
func TestRestoreRefusesAnotherImage(t *testing.T) {
	e := newEnv(t).withCriu()
	archive := ctrtest.BusyboxArchive(t)
	src := e.driver()
	cfg := newTask(t, ArchivePrefix+archive, "sh", "-c", counterScript).build()
	start(t, src, cfg)
	eventually(t, "the counter to pass 5", func() bool { return lastCount(t, cfg.TaskDir) >= 5 })
	dir := filepath.Join(t.TempDir(), "image")
	if _, err := src.CheckpointTask(context.Background(), cfg.ID, dir, false); err != nil {
		t.Fatalf("CheckpointTask: %v", err)
	}
	wait(t, src, cfg.ID)
	other, err := ctrtest.BuildBusyboxArchive(t.TempDir(), ctrtest.ImageOptions{Cmd: []string{"/bin/true"}})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(other)
	if err := os.WriteFile(archive, data, 0o644); err != nil {
		t.Fatal(err)
	}
	dst, dstNS := e.target()
	_, err = dst.RestoreTask(context.Background(), cfg, dir, true)
	if err == nil || !strings.Contains(err.Error(), "the image changed") {
		t.Fatalf("RestoreTask onto another image: %v, want refused", err)
	}
	if ids := ctrtest.Containers(t, e.socket, dstNS); len(ids) != 0 {
		t.Fatalf("the refused restore left containers %v", ids)
	}
}
