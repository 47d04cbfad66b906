package state

import (
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
)

// TestCollectGarbageDeletesOnlyWhatIsStillFinished: a garbage command
// applied late deletes nothing the cell needs: a live allocation, a
// pending evaluation, a running deployment or a workload's newest
// deployment stay, whatever the command names.
func TestCollectGarbageDeletesOnlyWhatIsStillFinished(t *testing.T) {
	s := New()
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	mustWrite(t, s, 1, func(w *WriteTxn) error { return w.UpsertNode(node("n1", 4000)) })
	wl := &api.Workload{Name: "w", Version: 1, Groups: []*api.TaskGroup{{Name: "g", Replicas: 1}}}
	mustWrite(t, s, 2, func(w *WriteTxn) error {
		return w.RegisterWorkload(wl, &api.Deployment{ID: "d1", Workload: "w", Status: api.DeploymentRunning}, at)
	})
	wl2 := &api.Workload{Name: "w", Version: 2, Groups: wl.Groups}
	mustWrite(t, s, 3, func(w *WriteTxn) error {
		return w.RegisterWorkload(wl2, &api.Deployment{ID: "d2", Workload: "w", Status: api.DeploymentRunning}, at)
	})
	mustWrite(t, s, 4, func(w *WriteTxn) error {
		for _, a := range []*api.Allocation{alloc("live", "n1", 100), alloc("done", "n1", 100)} {
			if err := w.UpsertAlloc(a); err != nil {
				return err
			}
		}
		for _, e := range []*api.Evaluation{{ID: "pending", Workload: "w", Status: api.EvalPending}, {ID: "complete", Workload: "w", Status: api.EvalComplete}} {
			if err := w.UpsertEval(e); err != nil {
				return err
			}
		}
		return w.UpdateAllocFromClientAt(&api.AllocUpdate{ID: "done", ClientStatus: api.AllocComplete}, at)
	})
	var got Collected
	mustWrite(t, s, 5, func(w *WriteTxn) (err error) {
		got, err = w.CollectGarbage([]string{"live", "done", "missing"}, []string{"pending", "complete"}, []string{"d1", "d2"})
		return err
	})
	want := Collected{Allocs: 1, Evals: 1, Deployments: 1} // done, complete, d1 (cancelled by d2)
	if got != want {
		t.Fatalf("collected %+v, want %+v", got, want)
	}
	snap := s.Snapshot()
	if snap.Alloc("live") == nil || snap.Alloc("done") != nil || snap.Eval("pending") == nil || snap.Eval("complete") != nil ||
		snap.Deployment("d1") != nil || snap.Deployment("d2") == nil {
		t.Fatal("the wrong objects were deleted")
	}
	if n := snap.Node("n1"); n.Allocated.CPUMilli != 100 {
		t.Fatalf("node n1 allocated %d millicores, want the live allocation's 100", n.Allocated.CPUMilli)
	}
}

// TestCurrentEvals: listings hide a purged workload's finished
// evaluations and an earlier incarnation's, and show a purged workload's
// evaluation while it runs.
func TestCurrentEvals(t *testing.T) {
	s := New()
	mustWrite(t, s, 10, func(w *WriteTxn) error {
		return w.UpsertWorkload(&api.Workload{Name: "w", Version: 1, Groups: []*api.TaskGroup{{Name: "g", Replicas: 1}}})
	})
	evals := []*api.Evaluation{
		{ID: "earlier", Namespace: api.DefaultNamespace, Workload: "w", Status: api.EvalComplete, CreateIndex: 5},
		{ID: "current", Namespace: api.DefaultNamespace, Workload: "w", Status: api.EvalComplete, CreateIndex: 10},
		{ID: "purged-done", Namespace: api.DefaultNamespace, Workload: "gone", Status: api.EvalComplete, CreateIndex: 7},
		{ID: "purged-running", Namespace: api.DefaultNamespace, Workload: "gone", Status: api.EvalPending, CreateIndex: 8},
	}
	var ids []string
	for _, e := range s.Snapshot().CurrentEvals(evals) {
		ids = append(ids, e.ID)
	}
	if len(ids) != 2 || ids[0] != "current" || ids[1] != "purged-running" {
		t.Fatalf("listed %v, want [current purged-running]", ids)
	}
}
