package server

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/fsm"
	"github.com/strata-dev/strata/internal/nodeauth"
	"github.com/strata-dev/strata/internal/state"
)

// Issue 18's defect 2: one request of replicas: 1000000 (the documented
// maximum) grew a server past 6 GiB and killed it, and it died again on
// every restart (the entry is in the raft log). These tests measure what a
// pending replica costs a server, and replay such an entry.

// hugeWorkload is a one-group workload of n tiny replicas, as the issue's
// reproducer (1m of CPU and 1Mi of memory each), built as an older server
// accepted it: it goes straight into the log, past today's admission.
func hugeWorkload(name string, n int) *fsm.UpsertWorkload {
	w := &api.Workload{Name: name, Namespace: api.DefaultNamespace, Priority: 50, SubmitTime: time.Now(), Groups: []*api.TaskGroup{{Name: "g", Replicas: n,
		Tasks: []*api.Task{{Name: "t", Driver: "mock", Command: []string{"x"}, Resources: api.Resources{CPUMilli: 1, MemoryBytes: 1 << 20}}}}}}
	return &fsm.UpsertWorkload{Workload: w, Eval: &api.Evaluation{ID: "eval-" + name, Namespace: api.DefaultNamespace, Workload: name,
		Priority: 50, TriggeredBy: api.TriggerWorkloadRegister, Status: api.EvalPending, CreateTime: time.Now()}}
}

// smallNode registers a node of 2 cores: 2,000 of those replicas fit.
func smallNode(tb testing.TB, s *Server, id string) {
	tb.Helper()
	n := &api.Node{ID: id, Name: id, Status: api.NodeReady, Capacity: api.Resources{CPUMilli: 2000, MemoryBytes: 8 << 30, DiskBytes: 1 << 40, NetMbps: 10000}}
	if _, err := s.propose(&fsm.UpsertNode{Node: n, Key: &state.NodeKey{NodeID: id, Verifier: nodeauth.Verifier(testNodeSecret(id))}}); err != nil {
		tb.Fatal(err)
	}
}

// waitBlocked waits until workload's evaluation has placed what fits.
func waitBlocked(tb testing.TB, s *Server, workload string, placed int) {
	tb.Helper()
	waitFor(tb, time.Minute, workload+" evaluated", func() error {
		snap := s.State().Snapshot()
		if n := len(snap.AllocsByWorkload("", workload)); n != placed {
			return fmt.Errorf("%d placed", n)
		}
		for _, e := range snap.EvalsByWorkload(nil, "", workload) {
			if e.Status != api.EvalBlocked {
				return fmt.Errorf("evaluation %s %s", e.ID, e.Status)
			}
		}
		return nil
	})
	waitBrokerIdle(tb, s)
}

// TestPendingReplicasCostTheServerNothing: the same cell takes a workload
// of 10^5 and one of 10^6 such replicas; 2,000 of each are placed. What
// the server allocates for the evaluation and keeps afterwards must not
// grow with the 900,000 more replicas it cannot place (it was about 180
// bytes allocated per pending replica a run, every run).
func TestPendingReplicasCostTheServerNothing(t *testing.T) {
	cost := func(replicas int) (allocated, kept int64) {
		s := quietServer(t)
		smallNode(t, s, "node-1")
		waitBrokerIdle(t, s)
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if _, err := s.propose(hugeWorkload("w", replicas)); err != nil {
			t.Fatal(err)
		}
		waitBlocked(t, s, "w", 2000)
		runtime.GC()
		runtime.ReadMemStats(&after)
		s.Close()
		return int64(after.TotalAlloc - before.TotalAlloc), int64(after.HeapAlloc) - int64(before.HeapAlloc)
	}
	allocSmall, keptSmall := cost(100_000)
	allocLarge, keptLarge := cost(1_000_000)
	perAlloc, perKept := float64(allocLarge-allocSmall)/900_000, float64(keptLarge-keptSmall)/900_000
	t.Logf("10^5 replicas: %d KiB allocated, %d KiB kept; 10^6: %d KiB allocated, %d KiB kept; per pending replica %.1f B allocated, %.1f B kept",
		allocSmall>>10, keptSmall>>10, allocLarge>>10, keptLarge>>10, perAlloc, perKept)
	if perAlloc > 8 || perKept > 8 {
		t.Errorf("a pending replica costs %.1f bytes allocated and %.1f kept: pending replicas of a group must be one count", perAlloc, perKept)
	}
}

// TestServerComesUpAfterReplayingAMillionReplicas: a server whose log
// holds an accepted entry of 10^6 replicas restarts, replays it, runs its
// evaluation again, and serves, allocating little on the way.
func TestServerComesUpAfterReplayingAMillionReplicas(t *testing.T) {
	dir := t.TempDir()
	s := quietServerIn(t, dir)
	smallNode(t, s, "node-1")
	if _, err := s.propose(hugeWorkload("w", 1_000_000)); err != nil {
		t.Fatal(err)
	}
	waitBlocked(t, s, "w", 2000)
	s.Close()

	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	s = quietServerIn(t, dir) // replays the log, leads, evaluates again
	waitOK(t, s.Addr()+"/v1/status/ready")
	// The evaluation runs again on this leader: a capacity change (a new
	// node) makes it.
	smallNode(t, s, "node-2")
	waitBlocked(t, s, "w", 4000)
	runtime.ReadMemStats(&after)
	allocated := after.TotalAlloc - before.TotalAlloc
	f := s.State().Snapshot().EvalsByWorkload(nil, "", "w")[0].Failures
	if len(f) != 1 || f[0].Missing != 1_000_000-4000 {
		t.Fatalf("after the restart the evaluation says %+v, want %d missing", f, 1_000_000-4000)
	}
	t.Logf("restart, replay and a new evaluation of 10^6 replicas allocated %d MiB", allocated>>20)
	if allocated > 96<<20 {
		t.Errorf("the restart allocated %d MiB: it must not grow with the pending replicas", allocated>>20)
	}
}
