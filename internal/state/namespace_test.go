package state

import (
	"errors"
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-dev/strata/api"
)

// sumUsage is a namespace's usage recomputed from every allocation.
func sumUsage(s *Snapshot, ns string) api.QuotaUsage {
	var u api.QuotaUsage
	for _, a := range s.Allocs(nil) {
		if api.CountsAgainstQuota(a) && api.NamespaceOf(a.Namespace) == ns {
			u = u.Add(api.UsageOf(a.Resources))
		}
	}
	return u
}

// TestPropertyNamespaceUsageIsTheSum: over random placements, stops,
// preemptions and agent reports in three namespaces (one of them the
// empty, pre-namespace one), each namespace's incremental usage equals
// the sum over its allocations that count, and a restored snapshot
// rebuilds the same.
func TestPropertyNamespaceUsageIsTheSum(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := New()
		namespaces := []string{"", "a", "b"}
		var ids []string
		for i := range rapid.IntRange(1, 40).Draw(t, "ops") {
			idx := uint64(i + 1)
			err := s.Write(idx, func(w *WriteTxn) error {
				if len(ids) == 0 || rapid.IntRange(0, 2).Draw(t, "op") == 0 {
					id := fmt.Sprintf("a%d", i)
					ids = append(ids, id)
					return w.UpsertAlloc(&api.Allocation{ID: id, Namespace: rapid.SampledFrom(namespaces).Draw(t, "ns"),
						Workload: "w", NodeID: "n1", DesiredStatus: api.DesiredRun, ClientStatus: api.AllocPending,
						Resources: api.Resources{CPUMilli: rapid.Int64Range(0, 4000).Draw(t, "cpu"),
							GPUs: rapid.Int64Range(0, 2).Draw(t, "gpus"), GPUMilli: rapid.Int64Range(0, 999).Draw(t, "share")}})
				}
				id := rapid.SampledFrom(ids).Draw(t, "target")
				switch rapid.IntRange(0, 2).Draw(t, "change") {
				case 0:
					return w.StopAllocRequest(api.StopRequest{AllocID: id, Reason: "r",
						PreemptedBy: rapid.SampledFrom([]string{"", "x"}).Draw(t, "preempted"), Lost: rapid.Bool().Draw(t, "lost")})
				default:
					return w.UpdateAllocFromClient(&api.AllocUpdate{ID: id,
						ClientStatus: rapid.SampledFrom([]string{api.AllocRunning, api.AllocComplete, api.AllocFailed}).Draw(t, "status")})
				}
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		restored, err := Restore(s.Snapshot().Dump())
		if err != nil {
			t.Fatal(err)
		}
		for _, ns := range []string{api.DefaultNamespace, "a", "b"} {
			want := sumUsage(s.Snapshot(), ns)
			if got := s.Snapshot().NamespaceUsage(ns); got != want {
				t.Fatalf("namespace %s: usage %+v, sum %+v", ns, got, want)
			}
			if got := restored.Snapshot().NamespaceUsage(ns); got != want {
				t.Fatalf("namespace %s restored: usage %+v, sum %+v", ns, got, want)
			}
		}
	})
}

// TestNamespaceLifecycle: a workload needs its namespace (the default one
// always exists); a namespace holding a workload is not deleted; workloads
// of one name in two namespaces are two.
func TestNamespaceLifecycle(t *testing.T) {
	s := New()
	write := func(idx uint64, fn func(w *WriteTxn) error) error { return s.Write(idx, fn) }
	if err := write(1, func(w *WriteTxn) error { return w.UpsertWorkload(&api.Workload{Namespace: "a", Name: "web"}) }); !errors.Is(err, ErrNamespaceMissing) {
		t.Fatalf("workload in a missing namespace: %v", err)
	}
	if err := write(2, func(w *WriteTxn) error {
		if err := w.UpsertNamespace(&api.Namespace{Name: "a"}); err != nil {
			return err
		}
		if err := w.UpsertWorkload(&api.Workload{Namespace: "a", Name: "web"}); err != nil {
			return err
		}
		return w.UpsertWorkload(&api.Workload{Name: "web"})
	}); err != nil {
		t.Fatal(err)
	}
	snap := s.Snapshot()
	if a, d := snap.Workload("a", "web"), snap.Workload("", "web"); a == nil || d == nil || a == d || d.Namespace != api.DefaultNamespace {
		t.Fatalf("web in a %+v, in default %+v", a, d)
	}
	if n := len(snap.WorkloadsIn(nil, "a")); n != 1 {
		t.Fatalf("%d workloads in a, want 1", n)
	}
	if err := write(3, func(w *WriteTxn) error { return w.DeleteNamespace("a") }); !errors.Is(err, ErrNamespaceNotEmpty) {
		t.Fatalf("delete a namespace with a workload: %v", err)
	}
	if err := write(4, func(w *WriteTxn) error {
		if err := w.DeleteWorkload("a", "web"); err != nil {
			return err
		}
		return w.DeleteNamespace("a")
	}); err != nil {
		t.Fatal(err)
	}
	if s.Snapshot().Namespace("a") != nil || s.Snapshot().Workload("", "web") == nil {
		t.Fatal("namespace a not deleted, or default's web with it")
	}
}
