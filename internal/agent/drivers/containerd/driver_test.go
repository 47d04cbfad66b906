package containerd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	client "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/pkg/namespaces"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/cgroup"
	"github.com/strata-dev/strata/internal/agent/drivers"
	"github.com/strata-dev/strata/internal/agent/drivers/containerd/ctrtest"
	"github.com/strata-dev/strata/internal/agent/drivers/driverstest"
	"github.com/strata-dev/strata/internal/agent/logs"
)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "__containerd-log" {
		os.Exit(LogMain(os.Args[2:]))
	}
	os.Exit(m.Run())
}

// env is one test's daemon, namespace and cgroup parent.
type env struct {
	t      *testing.T
	socket string
	ns     string
	parent string
	clock  *fakeClock
	noRoot bool   // drivers refuse uid 0
	criu   string // the criu drivers checkpoint with (withCriu)
}

type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func newEnv(t *testing.T) *env {
	t.Helper()
	socket := ctrtest.Socket(t)
	e := &env{t: t, socket: socket, ns: ctrtest.Namespace(t, socket),
		parent: fmt.Sprintf("strata-ctrtest/%d", time.Now().UnixNano()),
		clock:  &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}}
	// runc removes a task's cgroup when the task is deleted; the parents
	// above it are the test's to remove (after the namespace is purged).
	t.Cleanup(func() { removeCgroupTree(filepath.Dir(e.parent)) })
	return e
}

// driver opens a driver on the env's daemon; it is closed when t ends.
func (e *env) driver() *Driver {
	e.t.Helper()
	self, err := os.Executable()
	if err != nil {
		e.t.Fatal(err)
	}
	d, err := New(Config{Socket: e.socket, Namespace: e.ns, CgroupParent: e.parent,
		LogCommand: []string{self, "__containerd-log"}, ImageGCInterval: -1, ImageGCGrace: time.Hour,
		ProgressInterval: 20 * time.Millisecond, Now: e.clock.Now, AllowRootTasks: !e.noRoot,
		CriuPath: e.criu, StateDir: e.t.TempDir()})
	if err != nil {
		e.t.Fatalf("New: %v", err)
	}
	e.t.Cleanup(func() { d.Close() })
	return d
}

// taskBuilder makes the TaskConfig of one containerd task.
type taskBuilder struct{ cfg drivers.TaskConfig }

func newTask(t testing.TB, image string, cmd ...string) *taskBuilder {
	alloc := fmt.Sprintf("ctrtest-%d", time.Now().UnixNano())
	dir := filepath.Join(t.TempDir(), "main")
	os.MkdirAll(dir, 0o755)
	return &taskBuilder{cfg: drivers.TaskConfig{
		ID: alloc + "/main", AllocID: alloc, Name: "main",
		Task:    &api.Task{Name: "main", Driver: Name, Image: image, Command: cmd},
		Env:     map[string]string{"GREETING": "hello"},
		TaskDir: dir, NUMANode: -1,
	}}
}

func (b *taskBuilder) mem(n int64) *taskBuilder     { b.cfg.Resources.MemoryBytes = n; return b }
func (b *taskBuilder) cpu(milli int64) *taskBuilder { b.cfg.Resources.CPUMilli = milli; return b }
func (b *taskBuilder) pids(n int64) *taskBuilder    { b.cfg.Task.PidsLimit = n; return b }
func (b *taskBuilder) cpus(c ...int) *taskBuilder   { b.cfg.CPUs, b.cfg.NUMANode = c, 0; return b }
func (b *taskBuilder) build() *drivers.TaskConfig   { c := b.cfg; return &c }
func (b *taskBuilder) progress(f func(string)) *taskBuilder {
	b.cfg.Progress = f
	return b
}

func start(t *testing.T, d *Driver, cfg *drivers.TaskConfig) *drivers.TaskHandle {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	h, err := d.StartTask(ctx, cfg)
	if err != nil {
		t.Fatalf("StartTask: %v", err)
	}
	t.Cleanup(func() { d.DestroyTask(cfg.ID) })
	return h
}

func wait(t *testing.T, d *Driver, id string) *drivers.ExitResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := d.WaitTask(ctx, id)
	if err != nil {
		t.Fatalf("WaitTask: %v", err)
	}
	return res
}

func readLog(t *testing.T, dir, stream string) string {
	t.Helper()
	data, err := os.ReadFile(logs.FileName(dir, stream))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(data)
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestArchiveImageRunsWithLogsAndExitCode(t *testing.T) {
	e := newEnv(t)
	archive := ctrtest.BusyboxArchive(t)
	d := e.driver()
	cfg := newTask(t, ArchivePrefix+archive, "sh", "-c", `echo "$GREETING from $(echo box)"; echo oops >&2; exit 3`).build()
	h := start(t, d, cfg)
	if h.PID <= 0 || h.Driver != Name {
		t.Fatalf("handle = %+v, want a pid and driver %s", h, Name)
	}
	res := wait(t, d, cfg.ID)
	if res.ExitCode != 3 || res.OOMKilled || res.Signal != 0 {
		t.Fatalf("result = %+v, want exit code 3", res)
	}
	// The log process writes until the pipes end; poll for it.
	eventually(t, "stdout.log", func() bool { return readLog(t, cfg.TaskDir, "stdout") == "hello from box\n" })
	eventually(t, "stderr.log", func() bool { return readLog(t, cfg.TaskDir, "stderr") == "oops\n" })
	if err := d.DestroyTask(cfg.ID); err != nil {
		t.Fatalf("DestroyTask: %v", err)
	}
	if _, err := d.client.LoadContainer(d.namespaced(context.Background()), containerID(cfg.ID)); err == nil {
		t.Fatal("container still exists after DestroyTask")
	}
}

func TestLimitsReachTheContainerCgroup(t *testing.T) {
	e := newEnv(t)
	archive := ctrtest.BusyboxArchive(t)
	d := e.driver()
	if d.version != cgroup.V1 {
		t.Skip("limit files checked on cgroup v1 paths; this host has v2")
	}
	cfg := newTask(t, ArchivePrefix+archive, "sleep", "60").mem(48 << 20).cpu(500).pids(32).cpus(0).build()
	h := start(t, d, cfg)
	for _, c := range []struct{ ctrl, file, want string }{
		{"memory", "memory.limit_in_bytes", strconv.Itoa(48 << 20)},
		{"cpu", "cpu.cfs_quota_us", "50000"},
		{"cpu", "cpu.cfs_period_us", "100000"},
		{"pids", "pids.max", "32"},
		{"cpuset", "cpuset.cpus", "0"},
	} {
		data, err := os.ReadFile(filepath.Join(cgroup.DefaultRoot, c.ctrl, h.Cgroup, c.file))
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if got := strings.TrimSpace(string(data)); got != c.want {
			t.Errorf("%s = %s, want %s", c.file, got, c.want)
		}
	}
	procs, err := os.ReadFile(filepath.Join(cgroup.DefaultRoot, "memory", h.Cgroup, "cgroup.procs"))
	if err != nil || !strings.Contains(string(procs), strconv.Itoa(h.PID)) {
		t.Fatalf("task pid %d not in its cgroup (%q, %v)", h.PID, procs, err)
	}
	// sleep is the container's pid 1, which ignores SIGTERM without a
	// handler: the stop must escalate to SIGKILL after the grace.
	began := time.Now()
	if err := d.StopTask(cfg.ID, 300*time.Millisecond); err != nil {
		t.Fatalf("StopTask: %v", err)
	}
	res := wait(t, d, cfg.ID)
	if res.Signal != 9 || time.Since(began) < 300*time.Millisecond {
		t.Fatalf("result = %+v after %s, want killed by signal 9 after the grace", res, time.Since(began))
	}
}

func TestOOMIsReportedAsOOM(t *testing.T) {
	e := newEnv(t)
	archive := ctrtest.BusyboxArchive(t)
	d := e.driver()
	// dd holds a 64MiB block in memory against a 16MiB limit.
	cfg := newTask(t, ArchivePrefix+archive, "dd", "if=/dev/zero", "of=/dev/null", "bs=64M", "count=4").mem(16 << 20).build()
	start(t, d, cfg)
	res := wait(t, d, cfg.ID)
	if !res.OOMKilled || res.Successful() {
		t.Fatalf("result = %+v, want OOM killed", res)
	}
	if got := res.Describe(); got != "OOM killed (memory limit 16MiB)" {
		t.Fatalf("Describe() = %q", got)
	}
}

func TestRecoverTaskAfterDriverRestart(t *testing.T) {
	e := newEnv(t)
	archive := ctrtest.BusyboxArchive(t)
	first := e.driver()
	running := newTask(t, ArchivePrefix+archive, "sh", "-c", "trap 'exit 0' TERM; while true; do sleep 0.1; done").build()
	h := start(t, first, running)
	exiting := newTask(t, ArchivePrefix+archive, "sh", "-c", "sleep 0.5; echo bye; exit 7").build()
	h2 := start(t, first, exiting)
	first.Close() // the agent goes away; the containers do not

	// The second task ends while no agent watches it.
	eventually(t, "second task to exit in containerd", func() bool {
		return taskStatus(t, e.socket, e.ns, containerID(exiting.ID)) == client.Stopped
	})

	second := e.driver()
	for _, hh := range []*drivers.TaskHandle{h, h2} {
		if err := second.RecoverTask(hh); err != nil {
			t.Fatalf("RecoverTask(%s): %v", hh.ID, err)
		}
	}
	if res := wait(t, second, exiting.ID); res.ExitCode != 7 {
		t.Fatalf("recovered exited task: %+v, want exit code 7", res)
	}
	if err := second.StopTask(running.ID, 10*time.Second); err != nil {
		t.Fatalf("StopTask after recovery: %v", err)
	}
	if res := wait(t, second, running.ID); res.ExitCode != 0 {
		t.Fatalf("recovered running task after SIGTERM: %+v, want exit code 0 (its trap)", res)
	}
	eventually(t, "log written across the restart", func() bool { return readLog(t, exiting.TaskDir, "stdout") == "bye\n" })

	gone := *h
	gone.ID = "no-such-alloc/main"
	if err := second.RecoverTask(&gone); !errors.Is(err, drivers.ErrTaskNotFound) {
		t.Fatalf("RecoverTask of an unknown container = %v, want ErrTaskNotFound", err)
	}
}

// taskStatus asks the daemon directly (not through a driver) for the state
// of a container's task.
func taskStatus(t *testing.T, socket, ns, id string) client.ProcessStatus {
	c, err := client.New(socket, client.WithDefaultNamespace(ns))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := namespaces.WithNamespace(context.Background(), ns)
	ctr, err := c.LoadContainer(ctx, id)
	if err != nil {
		return client.Unknown
	}
	task, err := ctr.Task(ctx, nil)
	if err != nil {
		return client.Unknown
	}
	st, err := task.Status(ctx)
	if err != nil {
		return client.Unknown
	}
	return st.Status
}

// removeCgroupTree removes the empty cgroup directories under rel in
// every v1 controller (or the v2 tree), deepest first.
func removeCgroupTree(rel string) {
	roots, _ := filepath.Glob(filepath.Join(cgroup.DefaultRoot, "*", rel))
	roots = append(roots, filepath.Join(cgroup.DefaultRoot, rel))
	for _, root := range roots {
		var dirs []string
		filepath.WalkDir(root, func(p string, de os.DirEntry, err error) error {
			if err == nil && de.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		for i := len(dirs) - 1; i >= 0; i-- {
			os.Remove(dirs[i])
		}
	}
}

// TestCloseEndsEveryGoroutine: the driver's monitors, its collector (Run)
// and its client's connections end when it closes (issue 17); the
// container runs on.
func TestCloseEndsEveryGoroutine(t *testing.T) {
	e := newEnv(t)
	archive := ctrtest.BusyboxArchive(t)
	baseline := runtime.NumGoroutine()
	d := e.driver()
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { defer close(ran); d.Run(ctx) }()
	cfg := newTask(t, ArchivePrefix+archive, "sleep", "300").build()
	start(t, d, cfg)
	d.Close()
	<-ran // Run returns once the driver closed, even with ctx live
	cancel()
	driverstest.NoGoroutinesLeft(t, baseline, 10*time.Second)
	if taskStatus(t, e.socket, e.ns, containerID(cfg.ID)) != client.Running {
		t.Fatal("the container stopped with its driver")
	}
	again := e.driver()
	if err := again.RecoverTask(&drivers.TaskHandle{ID: cfg.ID}); err != nil {
		t.Fatal(err)
	}
	if err := again.StopTask(cfg.ID, time.Second); err != nil {
		t.Fatal(err)
	}
}
