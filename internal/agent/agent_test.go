package agent

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/drivers/driverstest"
	"github.com/strata-dev/strata/internal/agent/drivers/mock"
)

func TestRegistersFingerprintedNodeWithOverrides(t *testing.T) {
	t.Parallel()
	srv := newFakeServer()
	dataDir := t.TempDir()
	ag := startAgent(t, srv, dataDir, func(c *Config) {
		c.Labels = map[string]string{api.LabelRack: "r7", api.LabelZone: "z1"}
		c.MemoryTotal = 8 << 30
	})
	n := srv.node(ag.NodeID())
	if n.Name != "test-node" || n.Status != api.NodeReady || !strings.HasPrefix(n.HTTPAddr, "http://127.0.0.1:") {
		t.Errorf("node = %+v", n)
	}
	if n.Labels[api.LabelRack] != "r7" || n.Labels[api.LabelZone] != "z1" || n.Labels[api.LabelNode] != "test-node" {
		t.Errorf("labels = %v", n.Labels)
	}
	if n.Capacity.MemoryBytes != 8<<30 || n.Capacity.NetMbps != 10000 || n.Capacity.DiskBytes <= 0 || n.Capacity.GPUs != 0 {
		t.Errorf("capacity = %+v", n.Capacity)
	}
	var ncpu int
	for _, numa := range n.NUMA {
		ncpu += len(numa.CPUs)
	}
	if ncpu > 0 && n.Capacity.CPUMilli != int64(ncpu)*1000 {
		t.Errorf("cpu capacity %d for %d NUMA cpus", n.Capacity.CPUMilli, ncpu)
	}
	id, _ := os.ReadFile(filepath.Join(dataDir, "node-id"))
	if strings.TrimSpace(string(id)) != ag.NodeID() || len(ag.NodeID()) != 36 {
		t.Errorf("node id %q stored as %q", ag.NodeID(), id)
	}
}

func TestReregistersWhenServerForgetsNode(t *testing.T) {
	t.Parallel()
	srv := newFakeServer()
	ag := startAgent(t, srv, t.TempDir())
	srv.mu.Lock()
	srv.forget = true
	srv.mu.Unlock()
	eventually(t, 5*time.Second, "second registration", func() bool {
		srv.mu.Lock()
		defer srv.mu.Unlock()
		return srv.registrations >= 2 && srv.nodes[ag.NodeID()] != nil
	})
}

func TestMockAllocCompletesAndReportsOnlyChanges(t *testing.T) {
	t.Parallel()
	srv := newFakeServer()
	ag := startAgent(t, srv, t.TempDir())
	alloc := newAlloc(ag.NodeID()).mockTask("t", map[string]string{"MOCK_RUN_FOR": "50ms"}).build()
	srv.put(alloc)
	up := waitTask(t, srv, alloc.ID, "t", "complete", func(u *api.AllocUpdate, _ *api.TaskState) bool {
		return u.ClientStatus == api.AllocComplete
	})
	if ts := up.TaskStates["t"]; ts.ExitCode != 0 || ts.Failed || ts.StartedAt.IsZero() || ts.FinishedAt.IsZero() {
		t.Errorf("task state %+v", ts)
	}
	// Poke the agent with unchanged server data: nothing new is reported.
	srv.mu.Lock()
	sent := len(srv.batches)
	srv.mu.Unlock()
	srv.put(srv.allocs[alloc.ID])
	ag.markAllDirtyNoReset()
	time.Sleep(100 * time.Millisecond) // waiting for the absence of an event
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if len(srv.batches) != sent {
		t.Errorf("unchanged status reported again: %d batches, was %d", len(srv.batches), sent)
	}
	seen := map[string]bool{}
	for _, b := range srv.batches {
		for _, u := range b {
			data, _ := json.Marshal(u)
			if seen[string(data)] {
				t.Errorf("identical update sent twice: %s", data)
			}
			seen[string(data)] = true
		}
	}
}

// markAllDirtyNoReset marks every allocation dirty without forgetting what
// was sent, as an unrelated event would.
func (a *Agent) markAllDirtyNoReset() {
	a.mu.Lock()
	for id := range a.allocs {
		a.dirty[id] = true
	}
	a.mu.Unlock()
	a.kick(a.dirtyCh)
}

func TestFailedTaskStopsSiblingsAndFailsAlloc(t *testing.T) {
	t.Parallel()
	srv := newFakeServer()
	ag := startAgent(t, srv, t.TempDir())
	alloc := newAlloc(ag.NodeID()).
		mockTask("sidecar", nil).
		mockTask("main", map[string]string{"MOCK_RUN_FOR": "20ms", "MOCK_EXIT_CODE": "2"}).build()
	srv.put(alloc)
	up := waitTask(t, srv, alloc.ID, "sidecar", "sidecar stopped", func(_ *api.AllocUpdate, ts *api.TaskState) bool {
		return ts.State == api.TaskDead
	})
	if up.ClientStatus != api.AllocFailed || up.ClientReason != "task main: exit code 2" {
		t.Errorf("alloc = %s %q", up.ClientStatus, up.ClientReason)
	}
	if up.TaskStates["sidecar"].Failed || up.TaskStates["sidecar"].Message != "stopped" {
		t.Errorf("sidecar = %+v", up.TaskStates["sidecar"])
	}
}

func TestKeepsRunningWhileServerUnreachable(t *testing.T) {
	t.Parallel()
	srv := newFakeServer()
	drv := mock.New()
	ag := startAgent(t, srv, t.TempDir(), func(c *Config) { c.Drivers = map[string]Driver{"mock": drv} })
	alloc := newAlloc(ag.NodeID()).mockTask("t", map[string]string{"MOCK_RUN_FOR": "300ms"}).build()
	srv.put(alloc)
	waitTask(t, srv, alloc.ID, "t", "running", func(_ *api.AllocUpdate, ts *api.TaskState) bool { return ts.State == api.TaskRunning })
	srv.setUnreachable(true)
	// The task finishes while the server is away; its report waits.
	eventually(t, 5*time.Second, "task done locally", func() bool {
		ag.mu.Lock()
		defer ag.mu.Unlock()
		return ag.allocs[alloc.ID].tasks[0].dead()
	})
	if got := srv.update(alloc.ID).ClientStatus; got != api.AllocRunning {
		t.Fatalf("server saw %s while unreachable", got)
	}
	srv.setUnreachable(false)
	waitTask(t, srv, alloc.ID, "t", "complete after reconnect", func(u *api.AllocUpdate, _ *api.TaskState) bool {
		return u.ClientStatus == api.AllocComplete
	})
	if n := drv.Starts(alloc.ID + "/t"); n != 1 {
		t.Errorf("task started %d times, want 1", n)
	}
}

func TestForgetsAllocTheServerDropped(t *testing.T) {
	t.Parallel()
	srv := newFakeServer()
	ag := startAgent(t, srv, t.TempDir())
	alloc := newAlloc(ag.NodeID()).mockTask("t", nil).build()
	srv.put(alloc)
	waitTask(t, srv, alloc.ID, "t", "running", func(_ *api.AllocUpdate, ts *api.TaskState) bool { return ts.State == api.TaskRunning })
	srv.remove(alloc.ID)
	eventually(t, 5*time.Second, "alloc forgotten", func() bool {
		ag.mu.Lock()
		defer ag.mu.Unlock()
		return ag.allocs[alloc.ID] == nil
	})
	recs, err := ag.db.Allocs()
	if err != nil || len(recs) != 0 {
		t.Errorf("state still holds %d allocs (%v)", len(recs), err)
	}
	if _, err := os.Stat(filepath.Join(ag.cfg.DataDir, "allocs", alloc.ID)); !os.IsNotExist(err) {
		t.Errorf("alloc dir left: %v", err)
	}
}

func TestUnknownDriverFailsTask(t *testing.T) {
	t.Parallel()
	srv := newFakeServer()
	ag := startAgent(t, srv, t.TempDir())
	alloc := newAlloc(ag.NodeID()).mockTask("t", nil).last(func(tk *api.Task) { tk.Driver = "containerd" }).build()
	srv.put(alloc)
	up := waitTask(t, srv, alloc.ID, "t", "failed", func(u *api.AllocUpdate, _ *api.TaskState) bool { return u.ClientStatus == api.AllocFailed })
	if !strings.Contains(up.ClientReason, `driver "containerd" unavailable`) {
		t.Errorf("reason %q", up.ClientReason)
	}
}

// TestRunLeavesNoGoroutine: an agent's Run owns every goroutine it and
// its drivers start (loops, runners, monitors, the HTTP server) and
// returns only once they ended; the tasks run on (issue 17).
func TestRunLeavesNoGoroutine(t *testing.T) {
	needCgroups(t)
	srv := newFakeServer()
	baseline := runtime.NumGoroutine()
	dataDir := t.TempDir()
	ag := startAgent(t, srv, dataDir)
	alloc := newAlloc(ag.NodeID()).task("t", api.Resources{}, "sleep", "300").build()
	srv.put(alloc)
	pid := waitTask(t, srv, alloc.ID, "t", "task running", running).TaskStates["t"].PID
	mockAlloc := newAlloc(ag.NodeID()).mockTask("m", nil).build()
	srv.put(mockAlloc)
	waitTask(t, srv, mockAlloc.ID, "m", "mock task running", func(_ *api.AllocUpdate, ts *api.TaskState) bool { return ts.State == api.TaskRunning })
	ag.stop()
	driverstest.NoGoroutinesLeft(t, baseline, 10*time.Second)
	if !procAlive(pid) {
		t.Fatal("the task ended with its agent")
	}
}
