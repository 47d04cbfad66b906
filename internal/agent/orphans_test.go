package agent

import (
	"context"
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

// runExecTasks starts n allocations of one `sleep` task each and returns
// them with their driver handles once they run.
func runExecTasks(t *testing.T, srv *fakeServer, ag *testAgent, n int) ([]*api.Allocation, []*drivers.TaskHandle) {
	t.Helper()
	var allocs []*api.Allocation
	var handles []*drivers.TaskHandle
	for range n {
		alloc := newAlloc(ag.NodeID()).task("t", api.Resources{MemoryBytes: 32 << 20}, "sleep", "300").build()
		srv.put(alloc)
		allocs = append(allocs, alloc)
	}
	for _, alloc := range allocs {
		waitTask(t, srv, alloc.ID, "t", "task running", running)
		ag.mu.Lock()
		handles = append(handles, ag.allocs[alloc.ID].tasks[0].record().Handle)
		ag.mu.Unlock()
	}
	return allocs, handles
}

func cgroupDirsOf(t *testing.T, ag *testAgent, allocID string) []string {
	t.Helper()
	v, err := cgroup.Detect(cgroup.DefaultRoot)
	if err != nil {
		t.Fatal(err)
	}
	g, _ := cgroup.Open(v, cgroup.DefaultRoot, filepath.Join(ag.cfg.CgroupParent, allocID))
	return g.Dirs()
}

func noticesWith(srv *fakeServer, text string) int {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	n := 0
	for _, s := range srv.notices {
		if strings.Contains(s, text) {
			n++
		}
	}
	return n
}

// TestLostDataDirOrphansAreStopped reproduces defect 6 of issue 7: an agent
// whose data dir was deleted while its tasks ran left 3 tasks, 3 shims and
// 12 cgroup dirs running for good, even after the workload was purged. The
// new agent (a new node to the cell, which wants nothing of the old one's
// there) must stop them and remove their cgroups, and say so.
func TestLostDataDirOrphansAreStopped(t *testing.T) {
	needCgroups(t)
	t.Parallel()
	srv := newFakeServer()
	dataDir := t.TempDir()
	first := startAgent(t, srv, dataDir)
	allocs, handles := runExecTasks(t, srv, first, 3)
	first.stop()
	if err := os.RemoveAll(dataDir); err != nil {
		t.Fatal(err)
	}
	for _, a := range allocs {
		srv.remove(a.ID) // the workload is purged meanwhile
	}

	second := startAgent(t, srv, dataDir)
	if second.NodeID() == first.NodeID() {
		t.Fatalf("the node kept its id %s with its data dir gone", first.NodeID())
	}
	eventually(t, 20*time.Second, "every orphaned task and shim ended", func() bool {
		for _, h := range handles {
			if procAlive(h.PID) || procAlive(h.ShimPID) {
				return false
			}
		}
		return true
	})
	eventually(t, 10*time.Second, "the orphans' cgroups removed and reported", func() bool {
		for _, a := range allocs {
			for _, dir := range cgroupDirsOf(t, second, a.ID) {
				if _, err := os.Stat(dir); !os.IsNotExist(err) {
					return false
				}
			}
			if noticesWith(srv, "stopped allocation "+a.ID+"'s orphaned t (pid") != 1 {
				return false
			}
		}
		return true
	})
	second.mu.Lock()
	defer second.mu.Unlock()
	if len(second.allocs) != 0 {
		t.Errorf("the new agent runs %d allocations, want none", len(second.allocs))
	}
}

// TestLostRecordsWantedTasksAreAdopted: an agent that lost agent.db and
// its allocation dirs but kept its node id finds its tasks on the host; the
// cell still wants them on this node, so it re-attaches to the very same
// processes (no restart) and controls them from then on.
func TestLostRecordsWantedTasksAreAdopted(t *testing.T) {
	needCgroups(t)
	t.Parallel()
	srv := newFakeServer()
	dataDir := t.TempDir()
	first := startAgent(t, srv, dataDir)
	allocs, handles := runExecTasks(t, srv, first, 1)
	alloc, h := allocs[0], handles[0]
	first.stop()
	for _, p := range []string{"agent.db", "allocs"} {
		if err := os.RemoveAll(filepath.Join(dataDir, p)); err != nil {
			t.Fatal(err)
		}
	}
	srv.mu.Lock()
	srv.latest = map[string]*api.AllocUpdate{}
	srv.mu.Unlock()

	second := startAgent(t, srv, dataDir)
	up := waitTask(t, srv, alloc.ID, "t", "the adopted task reported running", running)
	if ts := up.TaskStates["t"]; ts.PID != h.PID || ts.Restarts != 0 {
		t.Fatalf("after adoption: %+v; want the same pid %d, no restart", ts, h.PID)
	}
	second.mu.Lock()
	h2 := second.allocs[alloc.ID].tasks[0].record().Handle
	second.mu.Unlock()
	if h2 == nil || h2.ShimPID != h.ShimPID || h2.ShimStart != h.ShimStart {
		t.Fatalf("adopted handle %+v, want shim %d", h2, h.ShimPID)
	}
	eventually(t, 5*time.Second, "the adoption reported", func() bool {
		return noticesWith(srv, "adopted allocation "+alloc.ID) == 1
	})
	srv.setDesired(alloc.ID, api.DesiredStop)
	waitTask(t, srv, alloc.ID, "t", "the adopted task stopped", func(_ *api.AllocUpdate, ts *api.TaskState) bool {
		return ts.State == api.TaskDead
	})
	eventually(t, 5*time.Second, "process and shim gone", func() bool { return !procAlive(h.PID) && !procAlive(h.ShimPID) })
}

// TestShimlessOrphansStoppedBeforeTheCellAnswers (issue 18 defect 4): the
// processes of a task whose shim died with the data dir have nobody to
// enforce their lease fence; a restarted agent cut off from its cell stops
// them at once instead of waiting for an allocation list that may come
// after the cell replaced them elsewhere.
func TestShimlessOrphansStoppedBeforeTheCellAnswers(t *testing.T) {
	needCgroups(t)
	t.Parallel()
	srv := newFakeServer()
	dataDir := t.TempDir()
	first := startAgent(t, srv, dataDir)
	_, handles := runExecTasks(t, srv, first, 1)
	first.stop()
	if err := syscall.Kill(handles[0].ShimPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "the shim gone", func() bool { return !procAlive(handles[0].ShimPID) })
	if !procAlive(handles[0].PID) {
		t.Fatal("the task died with its shim; nothing to test")
	}
	if err := os.RemoveAll(dataDir); err != nil {
		t.Fatal(err)
	}
	srv.setUnreachable(true) // cut off: no list will come
	cfg := first.cfg
	cfg.Drivers = nil
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	defer func() { cancel(); <-done }()
	eventually(t, 15*time.Second, "the shimless task stopped while the cell is out of reach", func() bool { return !procAlive(handles[0].PID) })
}
