package server_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/gc"
	"github.com/strata-dev/strata/internal/server"
	"github.com/strata-dev/strata/internal/server/servertest"
)

// evalsOf lists the evaluations every listing shows for workload name.
func evalsOf(t *testing.T, cl *api.Client, name string) []*api.Evaluation {
	t.Helper()
	all, err := cl.Evaluations(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []*api.Evaluation
	for _, e := range all {
		if e.Workload == name {
			out = append(out, e)
		}
	}
	return out
}

// TestPurgedWorkloadLeavesEveryListing: after `stop --purge`, the
// workload's evaluations leave the listings too once they finished (they
// stayed listed for ever), and a new workload of the same name lists only
// its own.
func TestPurgedWorkloadLeavesEveryListing(t *testing.T) {
	t.Parallel()
	c := servertest.Start(t, 1, nil)
	cl, ctx := c.Client(), context.Background()
	n1 := newFakeAgent(t, c, "n1", 8000)
	submit(t, cl, "web", "batch", 2, 1)
	waitRunning(t, cl, "web", 2, n1)
	before := evalsOf(t, cl, "web")
	if len(before) == 0 {
		t.Fatal("no evaluation listed for web")
	}
	if _, err := cl.StopWorkload(ctx, "web", true); err != nil {
		t.Fatal(err)
	}
	servertest.Eventually(t, 20*time.Second, "the purged workload's evaluations gone", func() error {
		if err := n1.sync(); err != nil {
			return err
		}
		if evals := evalsOf(t, cl, "web"); len(evals) != 0 {
			return fmt.Errorf("%d evaluations of web listed, the first %s", len(evals), evals[0].Status)
		}
		return nil
	})
	deps, _, err := cl.Deployments(ctx, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range deps {
		if d.Workload == "web" {
			t.Fatalf("deployment %s of the purged web listed", d.ID)
		}
	}
	submit(t, cl, "web", "batch", 1, 1)
	waitRunning(t, cl, "web", 1, n1)
	for _, e := range evalsOf(t, cl, "web") {
		for _, old := range before {
			if e.ID == old.ID {
				t.Fatalf("the new web lists evaluation %s of the purged one", e.ID)
			}
		}
	}
	st, _, err := cl.WorkloadStatus(ctx, "web", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, old := range before {
		if st.LatestEval != nil && st.LatestEval.ID == old.ID {
			t.Fatalf("the new web's status shows evaluation %s of the purged one", old.ID)
		}
	}
}

// TestGarbageCollectionKeepsWhatTheCellNeeds: with a retention of a
// millisecond, a pass of the leader's garbage collection deletes the
// allocations a scale-down stopped and the workload's older evaluations,
// and keeps the running allocation and the newest evaluation (the
// status explains the workload with it).
func TestGarbageCollectionKeepsWhatTheCellNeeds(t *testing.T) {
	t.Parallel()
	c := servertest.Start(t, 1, func(_ int, cfg *server.Config) {
		cfg.GC = gc.Policy{Allocations: time.Millisecond, Evaluations: time.Millisecond, Deployments: time.Millisecond}
		cfg.AutoQuarantine.Off = true // its window needs allocations kept longer
		cfg.GCInterval = time.Hour    // the test asks for each pass
	})
	cl, ctx := c.Client(), context.Background()
	n1 := newFakeAgent(t, c, "n1", 8000)
	submit(t, cl, "web", "batch", 3, 1)
	waitRunning(t, cl, "web", 3, n1)
	submit(t, cl, "web", "batch", 1, 1) // scale down: two stop
	waitRunning(t, cl, "web", 1, n1)
	srv := c.Servers[0]
	servertest.Eventually(t, 20*time.Second, "stopped allocations and old evaluations collected", func() error {
		if err := n1.sync(); err != nil {
			return err
		}
		if err := srv.CollectGarbageNow(); err != nil {
			return err
		}
		allocs, _, err := cl.Allocations(ctx, "web", nil)
		if err != nil {
			return err
		}
		if len(allocs) != 1 {
			return fmt.Errorf("%d allocations listed: %v", len(allocs), allocNames(allocs))
		}
		if evals := evalsOf(t, cl, "web"); len(evals) != 1 {
			return fmt.Errorf("%d evaluations listed", len(evals))
		}
		return nil
	})
	allocs, _, _ := cl.Allocations(ctx, "web", nil)
	if a := allocs[0]; a.ClientStatus != api.AllocRunning || a.DesiredStatus != api.DesiredRun {
		t.Fatalf("the allocation kept is %s/%s, want the running one", a.DesiredStatus, a.ClientStatus)
	}
	st, _, err := cl.WorkloadStatus(ctx, "web", nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.LatestEval == nil {
		t.Fatal("the workload's newest evaluation was collected")
	}
}
