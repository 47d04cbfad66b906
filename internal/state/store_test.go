package state

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/go-memdb"
	"pgregory.net/rapid"

	"github.com/strata-dev/strata/api"
)

func node(id string, cpu int64) *api.Node {
	return &api.Node{ID: id, Name: id, Status: api.NodeReady, Capacity: api.Resources{CPUMilli: cpu, MemoryBytes: 1 << 30}}
}

func alloc(id, nodeID string, cpu int64) *api.Allocation {
	return &api.Allocation{ID: id, NodeID: nodeID, Workload: "w", Group: "g", DesiredStatus: api.DesiredRun,
		ClientStatus: api.AllocPending, Resources: api.Resources{CPUMilli: cpu, MemoryBytes: 1 << 20}}
}

// fataler is the part of testing.TB that rapid.T also has.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

func mustWrite(t fataler, s *Store, index uint64, fn func(w *WriteTxn) error) {
	t.Helper()
	if err := s.Write(index, fn); err != nil {
		t.Fatalf("write at %d: %v", index, err)
	}
}

func TestAllocatedFollowsAllocationLifecycle(t *testing.T) {
	s := New()
	mustWrite(t, s, 1, func(w *WriteTxn) error { return w.UpsertNode(node("n1", 4000)) })
	mustWrite(t, s, 2, func(w *WriteTxn) error { return w.UpsertAlloc(alloc("a1", "n1", 1000)) })
	mustWrite(t, s, 3, func(w *WriteTxn) error { return w.UpsertAlloc(alloc("a2", "n1", 500)) })

	steps := []struct {
		name    string
		write   func(w *WriteTxn) error
		wantCPU int64
	}{
		{"running keeps resources", func(w *WriteTxn) error {
			return w.UpdateAllocFromClient(&api.AllocUpdate{ID: "a1", ClientStatus: api.AllocRunning})
		}, 1500},
		{"desired stop while running still holds", func(w *WriteTxn) error { return w.StopAlloc("a1", "test", false) }, 1500},
		{"complete frees", func(w *WriteTxn) error {
			return w.UpdateAllocFromClient(&api.AllocUpdate{ID: "a1", ClientStatus: api.AllocComplete})
		}, 500},
		{"lost frees", func(w *WriteTxn) error { return w.StopAlloc("a2", "node down", true) }, 0},
		{"report for lost alloc is ignored", func(w *WriteTxn) error {
			return w.UpdateAllocFromClient(&api.AllocUpdate{ID: "a2", ClientStatus: api.AllocRunning})
		}, 0},
		{"re-register keeps accounting", func(w *WriteTxn) error {
			if err := w.UpsertAlloc(alloc("a3", "n1", 250)); err != nil {
				return err
			}
			return w.UpsertNode(node("n1", 8000))
		}, 250},
	}
	for i, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			mustWrite(t, s, uint64(10+i), st.write)
			if got := s.Snapshot().Node("n1").Allocated.CPUMilli; got != st.wantCPU {
				t.Fatalf("allocated cpu = %d, want %d", got, st.wantCPU)
			}
		})
	}
}

func TestFailedWriteCommitsNothing(t *testing.T) {
	s := New()
	mustWrite(t, s, 1, func(w *WriteTxn) error { return w.UpsertNode(node("n1", 4000)) })
	err := s.Write(2, func(w *WriteTxn) error {
		if err := w.UpsertAlloc(alloc("a1", "n1", 1000)); err != nil {
			return err
		}
		return w.StopAlloc("missing", "x", false)
	})
	if err == nil {
		t.Fatal("want error for a missing allocation")
	}
	snap := s.Snapshot()
	if snap.Alloc("a1") != nil || snap.Node("n1").Allocated.CPUMilli != 0 || snap.Index() != 1 {
		t.Fatalf("partial write visible: alloc=%v allocated=%d index=%d", snap.Alloc("a1"), snap.Node("n1").Allocated.CPUMilli, snap.Index())
	}
}

// TestAllocatedEqualsSum is the accounting invariant: after any sequence of
// allocation writes, each node's Allocated equals the sum over its
// non-terminal allocations.
func TestAllocatedEqualsSum(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := New()
		nodes := []string{"n1", "n2", "n3"}
		index := uint64(1)
		for _, n := range nodes {
			mustWrite(t, s, index, func(w *WriteTxn) error { return w.UpsertNode(node(n, 1<<40)) })
			index++
		}
		var ids []string
		for step := range rapid.IntRange(1, 60).Draw(t, "steps") {
			index++
			switch op := rapid.IntRange(0, 3).Draw(t, "op"); {
			case op == 0 || len(ids) == 0:
				id := fmt.Sprintf("a%d", step)
				a := alloc(id, rapid.SampledFrom(nodes).Draw(t, "node"), rapid.Int64Range(1, 4000).Draw(t, "cpu"))
				ids = append(ids, id)
				mustWrite(t, s, index, func(w *WriteTxn) error { return w.UpsertAlloc(a) })
			case op == 1:
				id := rapid.SampledFrom(ids).Draw(t, "id")
				status := rapid.SampledFrom([]string{api.AllocRunning, api.AllocComplete, api.AllocFailed}).Draw(t, "status")
				mustWrite(t, s, index, func(w *WriteTxn) error {
					return w.UpdateAllocFromClient(&api.AllocUpdate{ID: id, ClientStatus: status})
				})
			default:
				id := rapid.SampledFrom(ids).Draw(t, "id")
				lost := rapid.Bool().Draw(t, "lost")
				mustWrite(t, s, index, func(w *WriteTxn) error { return w.StopAlloc(id, "x", lost) })
			}
		}
		snap := s.Snapshot()
		for _, n := range nodes {
			var want api.Resources
			for _, a := range snap.AllocsByNode(n) {
				if !a.Terminal() {
					want = want.Add(a.Resources)
				}
			}
			if got := snap.Node(n).Allocated; got != want {
				t.Fatalf("node %s allocated %+v, sum of allocations %+v", n, got, want)
			}
		}
	})
}

func TestQueryBlocksUntilChange(t *testing.T) {
	s := New()
	mustWrite(t, s, 5, func(w *WriteTxn) error { return w.UpsertNode(node("n1", 1000)) })
	read := func(snap *Snapshot, ws memdb.WatchSet) (uint64, error) {
		return snap.TableIndex(ws, TableAllocs), nil
	}
	go func() {
		mustWrite(t, s, 6, func(w *WriteTxn) error { return w.UpsertAlloc(alloc("a1", "n1", 10)) })
	}()
	idx, err := s.Query(context.Background(), 1, 10*time.Second, read)
	if err != nil || idx != 6 {
		t.Fatalf("Query = %d, %v; want 6", idx, err)
	}
	start := time.Now()
	idx, err = s.Query(context.Background(), 6, 50*time.Millisecond, read)
	if err != nil || idx != 6 || time.Since(start) < 40*time.Millisecond {
		t.Fatalf("Query with no change = %d, %v after %v; want 6 after the wait", idx, err, time.Since(start))
	}
}

func TestDumpRestoreRoundTrip(t *testing.T) {
	s := New()
	mustWrite(t, s, 3, func(w *WriteTxn) error {
		if err := w.UpsertNode(node("n1", 1000)); err != nil {
			return err
		}
		if err := w.UpsertWorkload(&api.Workload{Name: "w", Version: 1}); err != nil {
			return err
		}
		if err := w.UpsertEval(&api.Evaluation{ID: "e1", Workload: "w", Status: api.EvalPending}); err != nil {
			return err
		}
		return w.UpsertAlloc(alloc("a1", "n1", 100))
	})
	r, err := Restore(s.Snapshot().Dump())
	if err != nil {
		t.Fatal(err)
	}
	snap := r.Snapshot()
	if snap.Index() != 3 || snap.Workload("", "w") == nil || snap.Eval("e1") == nil || snap.Node("n1").Allocated.CPUMilli != 100 || len(snap.AllocsByNode("n1")) != 1 {
		t.Fatalf("restored store differs: index=%d", snap.Index())
	}
}

func TestEventsAreBoundedAndSurviveRestore(t *testing.T) {
	s := New()
	for i := 1; i <= MaxEvents+5; i++ {
		mustWrite(t, s, uint64(i), func(w *WriteTxn) error {
			return w.AddEvent(api.Event{Type: api.EventPlaced, Workload: "w", Message: fmt.Sprint(i)})
		})
	}
	evs := s.Snapshot().Events(nil, "", "w")
	if len(evs) != MaxEvents || evs[0].Message != "6" || evs[len(evs)-1].Message != fmt.Sprint(MaxEvents+5) {
		t.Fatalf("kept %d events, first %q", len(evs), evs[0].Message)
	}
	r, err := Restore(s.Snapshot().Dump())
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, r, MaxEvents+6, func(w *WriteTxn) error { return w.AddEvent(api.Event{Type: api.EventPlaced}) })
	if n := len(r.Snapshot().Events(nil, "", "")); n != MaxEvents {
		t.Fatalf("after restore and one more event: %d events, want %d", n, MaxEvents)
	}
}

// TestIndexIsTheRaftIndexWithManyEvents: bookkeeping never leaks into the
// store's index (it once did: the event counter outgrew the raft index).
func TestIndexIsTheRaftIndexWithManyEvents(t *testing.T) {
	s := New()
	mustWrite(t, s, 3, func(w *WriteTxn) error {
		for range 50 {
			if err := w.AddEvent(api.Event{Type: api.EventPlaced}); err != nil {
				return err
			}
		}
		return nil
	})
	if got := s.Snapshot().Index(); got != 3 {
		t.Fatalf("Index() = %d after 50 events at index 3, want 3", got)
	}
}

// TestUnprovenAuditEntriesHaveTheirOwnBound: unproven refusals, however
// many, push out only older unproven refusals; the rest of the log keeps
// its own bound. A restored store counts both classes again.
func TestUnprovenAuditEntriesHaveTheirOwnBound(t *testing.T) {
	st := New()
	write := func(idx uint64, entries []*api.AuditEntry) {
		t.Helper()
		if err := st.Write(idx, func(w *WriteTxn) error { return w.AppendAudit(entries) }); err != nil {
			t.Fatal(err)
		}
	}
	write(1, []*api.AuditEntry{{Who: "token a"}, {Who: "token b"}})
	for i := range 3 {
		flood := make([]*api.AuditEntry, MaxAudit)
		for j := range flood {
			flood[j] = &api.AuditEntry{Who: "anonymous", Unproven: true, Path: fmt.Sprint(i, "-", j)}
		}
		write(uint64(2+i), flood)
	}
	count := func(s *Store) (proven, unproven int, last string) {
		for _, e := range s.Snapshot().Audit(nil) {
			if e.Unproven {
				unproven++
				last = e.Path
			} else {
				proven++
			}
		}
		return
	}
	if p, u, last := count(st); p != 2 || u != MaxAuditUnproven || last != fmt.Sprint(2, "-", MaxAudit-1) {
		t.Fatalf("%d authenticated entries (want 2), %d unproven (want the newest %d, last %q)", p, u, MaxAuditUnproven, last)
	}
	restored, err := Restore(st.Snapshot().Dump())
	if err != nil {
		t.Fatal(err)
	}
	if err := restored.Write(10, func(w *WriteTxn) error {
		return w.AppendAudit([]*api.AuditEntry{{Who: "token c"}, {Who: "anonymous", Unproven: true}})
	}); err != nil {
		t.Fatal(err)
	}
	if p, u, _ := count(restored); p != 3 || u != MaxAuditUnproven {
		t.Fatalf("after a restore: %d authenticated, %d unproven entries; want 3 and %d", p, u, MaxAuditUnproven)
	}
}
