package agent

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
)

// TestAgentRestartReattachesWithoutRestarting stops the agent while a task
// runs, starts a new Agent on the same data dir and expects the very same
// processes, no restart, and the node identity kept.
func TestAgentRestartReattachesWithoutRestarting(t *testing.T) {
	needCgroups(t)
	t.Parallel()
	srv := newFakeServer()
	dataDir := t.TempDir()
	first := startAgent(t, srv, dataDir)
	alloc := newAlloc(first.NodeID()).task("db", api.Resources{MemoryBytes: 64 << 20}, "sleep", "300").build()
	srv.put(alloc)
	up := waitTask(t, srv, alloc.ID, "db", "task running", running)
	pid := up.TaskStates["db"].PID
	first.mu.Lock()
	handle := first.allocs[alloc.ID].tasks[0].record().Handle
	first.mu.Unlock()

	first.stop()
	if !procAlive(pid) || !procAlive(handle.ShimPID) {
		t.Fatalf("agent shutdown took the task (%d alive=%v) or its shim (%d alive=%v) down",
			pid, procAlive(pid), handle.ShimPID, procAlive(handle.ShimPID))
	}

	second := startAgent(t, srv, dataDir)
	if second.NodeID() != first.NodeID() {
		t.Fatalf("node id changed across restart: %s -> %s", first.NodeID(), second.NodeID())
	}
	eventually(t, 10*time.Second, "second agent reports the alloc", func() bool {
		second.mu.Lock()
		defer second.mu.Unlock()
		_, ok := second.lastSent[alloc.ID]
		return ok
	})
	up = srv.update(alloc.ID)
	ts := up.TaskStates["db"]
	if ts.State != api.TaskRunning || ts.PID != pid || ts.Restarts != 0 {
		t.Fatalf("after reattach: %+v, want running pid %d with 0 restarts", ts, pid)
	}
	second.mu.Lock()
	h2 := second.allocs[alloc.ID].tasks[0].record().Handle
	second.mu.Unlock()
	if h2 == nil || h2.ShimPID != handle.ShimPID {
		t.Fatalf("reattached handle %+v, want shim pid %d", h2, handle.ShimPID)
	}
	// The re-attached task is still controlled: stopping it works.
	srv.setDesired(alloc.ID, api.DesiredStop)
	waitTask(t, srv, alloc.ID, "db", "task stopped", func(_ *api.AllocUpdate, ts *api.TaskState) bool {
		return ts.State == api.TaskDead
	})
	eventually(t, 5*time.Second, "process gone", func() bool { return !procAlive(pid) })
}

// TestTaskExitWhileAgentDownAppliesRestartPolicy lets a task fail while no
// agent runs; the next agent reads the shim's exit file and restarts it.
func TestTaskExitWhileAgentDownAppliesRestartPolicy(t *testing.T) {
	needCgroups(t)
	t.Parallel()
	srv := newFakeServer()
	dataDir := t.TempDir()
	first := startAgent(t, srv, dataDir)
	// The gate lives in the task's own directory: the only host path,
	// besides the system's, that an isolated task sees.
	alloc := newAlloc(first.NodeID()).
		task("job", api.Resources{}, "sh", "-c", `GATE="$STRATA_TASK_DIR/exit-now"; while [ ! -e "$GATE" ]; do sleep 0.02; done; rm -f "$GATE"; exit 3`).
		restart(api.RestartPolicy{Mode: api.RestartOnFailure, Attempts: 1, Delay: 10 * time.Millisecond}).build()
	gate := filepath.Join(dataDir, "allocs", alloc.ID, "job", "local", "exit-now")
	srv.put(alloc)
	pid := waitTask(t, srv, alloc.ID, "job", "task running", running).TaskStates["job"].PID
	first.stop()

	os.WriteFile(gate, nil, 0o644)
	exitFile := filepath.Join(dataDir, "allocs", alloc.ID, "job", "exit.json")
	eventually(t, 10*time.Second, "shim writes the exit file", func() bool {
		_, err := os.Stat(exitFile)
		return err == nil
	})

	startAgent(t, srv, dataDir)
	up := waitTask(t, srv, alloc.ID, "job", "task restarted once", func(_ *api.AllocUpdate, ts *api.TaskState) bool {
		return ts.Restarts == 1 && ts.State == api.TaskRunning
	})
	ts := up.TaskStates["job"]
	if ts.PID == pid || ts.ExitCode != 3 {
		t.Errorf("after restart: %+v; want a new pid (old %d) and the exit code 3 recorded", ts, pid)
	}
}
