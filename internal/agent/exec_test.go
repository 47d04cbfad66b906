package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/cgroup"
)

func running(_ *api.AllocUpdate, ts *api.TaskState) bool {
	return ts.State == api.TaskRunning && ts.PID > 0
}

func readTrim(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return strings.TrimSpace(string(data))
}

// TestExecTaskConfinedThenStoppedCleanly runs a real process, checks it
// sits in its cgroups with the requested limits, stops it and checks that
// neither the process nor a cgroup directory is left.
func TestExecTaskConfinedThenStoppedCleanly(t *testing.T) {
	needCgroups(t)
	t.Parallel()
	srv := newFakeServer()
	ag := startAgent(t, srv, t.TempDir())
	alloc := newAlloc(ag.NodeID()).
		task("web", api.Resources{CPUMilli: 500, MemoryBytes: 64 << 20}, "sleep", "300").
		last(func(tk *api.Task) { tk.PidsLimit = 20 }).build()
	alloc.Assignment = api.Assignment{CPUs: []int{0}, NUMANode: 0}
	srv.put(alloc)

	up := waitTask(t, srv, alloc.ID, "web", "task running", running)
	if up.ClientStatus != api.AllocRunning {
		t.Errorf("client status = %s, want running", up.ClientStatus)
	}
	pid := up.TaskStates["web"].PID
	if !procAlive(pid) {
		t.Fatalf("task pid %d not alive", pid)
	}
	rel := "/" + filepath.Join(ag.cfg.CgroupParent, alloc.ID, "web")
	procCgroups := readTrim(t, fmt.Sprintf("/proc/%d/cgroup", pid))
	v, _ := cgroup.Detect(cgroup.DefaultRoot)
	var dirs []string
	if v == cgroup.V1 {
		member := map[string]string{} // controller -> cgroup path
		for _, line := range strings.Split(procCgroups, "\n") {
			parts := strings.SplitN(line, ":", 3)
			if len(parts) == 3 {
				for _, c := range strings.Split(parts[1], ",") {
					member[c] = parts[2]
				}
			}
		}
		for _, c := range []string{"cpu", "memory", "pids", "cpuset"} {
			if member[c] != rel {
				t.Errorf("pid %d in %s cgroup %q, want %q", pid, c, member[c], rel)
			}
			dirs = append(dirs, filepath.Join(cgroup.DefaultRoot, c, rel))
		}
		want := map[string]string{
			"memory/memory.limit_in_bytes": "67108864",
			"cpu/cpu.cfs_quota_us":         "50000",
			"cpu/cpu.cfs_period_us":        "100000",
			"pids/pids.max":                "20",
			"cpuset/cpuset.cpus":           "0",
			"cpuset/cpuset.mems":           "0",
		}
		for f, w := range want {
			ctrl, file, _ := strings.Cut(f, "/")
			if got := readTrim(t, filepath.Join(cgroup.DefaultRoot, ctrl, rel, file)); got != w {
				t.Errorf("%s = %q, want %q", f, got, w)
			}
		}
	} else {
		if !strings.Contains(procCgroups, "0::"+rel) {
			t.Errorf("pid %d not in %s:\n%s", pid, rel, procCgroups)
		}
		dir := filepath.Join(cgroup.DefaultRoot, rel)
		dirs = []string{dir}
		for f, w := range map[string]string{"memory.max": "67108864", "cpu.max": "50000 100000", "pids.max": "20"} {
			if got := readTrim(t, filepath.Join(dir, f)); got != w {
				t.Errorf("%s = %q, want %q", f, got, w)
			}
		}
	}

	srv.setDesired(alloc.ID, api.DesiredStop)
	up = waitTask(t, srv, alloc.ID, "web", "task dead after stop", func(_ *api.AllocUpdate, ts *api.TaskState) bool {
		return ts.State == api.TaskDead
	})
	if up.ClientStatus != api.AllocComplete || up.TaskStates["web"].Signal != int(syscall.SIGTERM) {
		t.Errorf("after stop: %s %+v, want complete, SIGTERM", up.ClientStatus, up.TaskStates["web"])
	}
	eventually(t, 5*time.Second, "task process gone", func() bool { return !procAlive(pid) })
	for _, d := range dirs {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("cgroup %s left after stop", d)
		}
	}
}

func TestExecOOMReported(t *testing.T) {
	needCgroups(t)
	t.Parallel()
	srv := newFakeServer()
	ag := startAgent(t, srv, t.TempDir())
	alloc := newAlloc(ag.NodeID()).
		task("hog", api.Resources{MemoryBytes: 32 << 20}, "sh", "-c", `x=$(head -c 200000000 /dev/zero | tr '\0' a); echo survived`).build()
	srv.put(alloc)
	up := waitTask(t, srv, alloc.ID, "hog", "task dead", func(_ *api.AllocUpdate, ts *api.TaskState) bool {
		return ts.State == api.TaskDead
	})
	ts := up.TaskStates["hog"]
	if !ts.OOMKilled || !ts.Failed || ts.Message != "OOM killed (memory limit 32MiB)" {
		t.Errorf("task state = %+v, want OOM killed", ts)
	}
	if up.ClientStatus != api.AllocFailed || up.ClientReason != "task hog: OOM killed (memory limit 32MiB)" {
		t.Errorf("alloc = %s %q", up.ClientStatus, up.ClientReason)
	}
	// The agent's metrics count it, by workload and task.
	sample := fmt.Sprintf(`strata_task_oom_kills_total{task="hog",workload="%s"}`, alloc.Workload)
	if v, ok := agentMetric(t, ag, sample); !ok || v != 1 {
		t.Errorf("%s = %v (present %v), want 1", sample, v, ok)
	}
}

func TestExecCrashRestartedThenFailed(t *testing.T) {
	needCgroups(t)
	t.Parallel()
	srv := newFakeServer()
	ag := startAgent(t, srv, t.TempDir())
	alloc := newAlloc(ag.NodeID()).
		task("server", api.Resources{MemoryBytes: 64 << 20}, "sh", "-c", "echo boom; exit 1").
		restart(api.RestartPolicy{Mode: api.RestartOnFailure, Attempts: 2, Delay: 20 * time.Millisecond, MaxDelay: 40 * time.Millisecond}).build()
	srv.put(alloc)
	up := waitTask(t, srv, alloc.ID, "server", "task failed", func(_ *api.AllocUpdate, ts *api.TaskState) bool {
		return ts.State == api.TaskDead
	})
	ts := up.TaskStates["server"]
	if ts.Restarts != 2 || ts.ExitCode != 1 || !ts.Failed {
		t.Errorf("task state = %+v, want 2 restarts then failed with exit 1", ts)
	}
	if up.ClientStatus != api.AllocFailed || up.ClientReason != "task server: exit code 1 after 2 restarts" {
		t.Errorf("alloc = %s %q", up.ClientStatus, up.ClientReason)
	}
	out := readTrim(t, filepath.Join(ag.cfg.DataDir, "allocs", alloc.ID, "server", "stdout.log"))
	if out != "boom\nboom\nboom" {
		t.Errorf("stdout over three runs = %q", out)
	}
}

func TestExecAlwaysRestartsSuccessfulTask(t *testing.T) {
	needCgroups(t)
	t.Parallel()
	srv := newFakeServer()
	ag := startAgent(t, srv, t.TempDir())
	alloc := newAlloc(ag.NodeID()).task("tick", api.Resources{}, "true").
		restart(api.RestartPolicy{Mode: api.RestartAlways, Delay: 10 * time.Millisecond, MaxDelay: 20 * time.Millisecond}).build()
	srv.put(alloc)
	up := waitTask(t, srv, alloc.ID, "tick", "3 restarts", func(_ *api.AllocUpdate, ts *api.TaskState) bool {
		return ts.Restarts >= 3
	})
	if up.ClientStatus != api.AllocRunning || up.TaskStates["tick"].Failed {
		t.Errorf("alloc = %s %+v, want running and not failed", up.ClientStatus, up.TaskStates["tick"])
	}
}

func TestExecStopEscalatesToSIGKILL(t *testing.T) {
	needCgroups(t)
	t.Parallel()
	srv := newFakeServer()
	ag := startAgent(t, srv, t.TempDir())
	const grace = 500 * time.Millisecond
	alloc := newAlloc(ag.NodeID()).
		task("stubborn", api.Resources{}, "sh", "-c", `trap 'echo got TERM' TERM; echo ready; while true; do sleep 0.05; done`).
		last(func(tk *api.Task) { tk.KillTimeout = grace }).build()
	srv.put(alloc)
	up := waitTask(t, srv, alloc.ID, "stubborn", "task running", running)
	pid := up.TaskStates["stubborn"].PID
	stdout := filepath.Join(ag.cfg.DataDir, "allocs", alloc.ID, "stubborn", "stdout.log")
	eventually(t, 10*time.Second, "trap installed", func() bool {
		data, _ := os.ReadFile(stdout)
		return strings.Contains(string(data), "ready")
	})
	start := time.Now()
	srv.setDesired(alloc.ID, api.DesiredStop)
	up = waitTask(t, srv, alloc.ID, "stubborn", "task dead", func(_ *api.AllocUpdate, ts *api.TaskState) bool {
		return ts.State == api.TaskDead
	})
	if took := time.Since(start); took < grace {
		t.Errorf("killed after %s, before the %s grace", took, grace)
	}
	if ts := up.TaskStates["stubborn"]; ts.Signal != int(syscall.SIGKILL) || ts.Failed {
		t.Errorf("task state = %+v, want SIGKILL and not failed", ts)
	}
	if data, _ := os.ReadFile(stdout); !strings.Contains(string(data), "got TERM") {
		t.Errorf("task never saw SIGTERM; stdout %q", data)
	}
	if procAlive(pid) {
		t.Errorf("pid %d alive after stop", pid)
	}
	if _, err := os.Stat(filepath.Join(cgroup.DefaultRoot, "memory", ag.cfg.CgroupParent, alloc.ID, "stubborn")); !os.IsNotExist(err) {
		t.Errorf("memory cgroup left after stop: %v", err)
	}
}

// TestNamespaceVetoOnRootHoldsOnTheNode is issue 18 defect 3 at the
// agent: on a node that allows root tasks, an allocation whose namespace
// does not (the server leaves AllowRootTasks unset) fails to start a task
// whose user resolves to root here, with the namespace's reason; the same
// task of a namespace that allows root runs as uid 0.
func TestNamespaceVetoOnRootHoldsOnTheNode(t *testing.T) {
	needCgroups(t)
	t.Parallel()
	srv := newFakeServer()
	ag := startAgent(t, srv, t.TempDir(), func(c *Config) { c.AllowRootTasks = true })
	for _, user := range []string{"00", "65534:0"} {
		alloc := newAlloc(ag.NodeID()).task("t", api.Resources{}, "true").last(func(tk *api.Task) { tk.User = user }).build()
		alloc.Namespace = "locked"
		srv.put(alloc)
		up := waitTask(t, srv, alloc.ID, "t", "the vetoed task to fail", func(_ *api.AllocUpdate, ts *api.TaskState) bool { return ts.State == api.TaskDead })
		if ts := up.TaskStates["t"]; !ts.Failed || !strings.Contains(ts.Message, `namespace "locked" does not allow root tasks`) {
			t.Errorf("user %q under the namespace's veto: %+v, want failed naming the namespace", user, ts)
		}
	}
	alloc := newAlloc(ag.NodeID()).task("t", api.Resources{}, "true").last(func(tk *api.Task) { tk.User = "00" }).build()
	alloc.AllowRootTasks = true
	srv.put(alloc)
	up := waitTask(t, srv, alloc.ID, "t", "the allowed root task to end", func(_ *api.AllocUpdate, ts *api.TaskState) bool { return ts.State == api.TaskDead })
	if ts := up.TaskStates["t"]; ts.Failed || ts.ExitCode != 0 {
		t.Errorf("root task of a namespace that allows it: %+v, want success", ts)
	}
}

// TestTaskStateSaysWhoTheTaskRunsAs: the report carries the uid and gid
// the task's process runs as (a move's memory depends on it where criu
// dumps root's tasks only).
func TestTaskStateSaysWhoTheTaskRunsAs(t *testing.T) {
	needCgroups(t)
	t.Parallel()
	srv := newFakeServer()
	ag := startAgent(t, srv, t.TempDir())
	alloc := newAlloc(ag.NodeID()).task("t", api.Resources{}, "sleep", "300").last(func(tk *api.Task) { tk.User = "65534:65533" }).build()
	srv.put(alloc)
	up := waitTask(t, srv, alloc.ID, "t", "task running", running)
	if got := up.TaskStates["t"].RunsAs; got != "65534:65533" {
		t.Errorf("runsAs %q, want 65534:65533", got)
	}
}

// TestResourcesChangedByTheServerApplyInPlace: when the server's copy of
// a running allocation gives a task new CPU and memory (the autoscaler's
// vertical move), the agent resizes it in place through its driver: same
// pid, no restart, the new limits in its cgroup.
func TestResourcesChangedByTheServerApplyInPlace(t *testing.T) {
	needCgroups(t)
	t.Parallel()
	srv := newFakeServer()
	ag := startAgent(t, srv, t.TempDir())
	alloc := newAlloc(ag.NodeID()).task("web", api.Resources{CPUMilli: 200, MemoryBytes: 64 << 20}, "sleep", "300").build()
	srv.put(alloc)
	pid := waitTask(t, srv, alloc.ID, "web", "task running", running).TaskStates["web"].PID

	grown := alloc.Copy()
	g := *alloc.TaskGroup
	task := *g.Tasks[0]
	task.Resources = api.Resources{CPUMilli: 700, MemoryBytes: 96 << 20}
	g.Tasks = []*api.Task{&task}
	grown.TaskGroup = &g
	srv.put(grown)

	v, _ := cgroup.Detect(cgroup.DefaultRoot)
	limit := filepath.Join(cgroup.DefaultRoot, ag.cfg.CgroupParent, alloc.ID, "web", "memory.max")
	if v == cgroup.V1 {
		limit = filepath.Join(cgroup.DefaultRoot, "memory", ag.cfg.CgroupParent, alloc.ID, "web", "memory.limit_in_bytes")
	}
	eventually(t, 10*time.Second, "the new memory limit in the task's cgroup", func() bool {
		b, _ := os.ReadFile(limit)
		return strings.TrimSpace(string(b)) == fmt.Sprint(96<<20)
	})
	ts := srv.update(alloc.ID).TaskStates["web"]
	if ts.PID != pid || ts.Restarts != 0 || !procAlive(pid) {
		t.Errorf("after the resize the task is %+v, want pid %d running, no restart", ts, pid)
	}
}
