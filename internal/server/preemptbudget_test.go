package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/internal/server/servertest"
)

// TestPreemptionKeepsVictimsBudget: a production workload that needs the
// whole node of a batch service with maxUnavailable 1 evicts one of its
// three replicas, not all of them, and its status names the budget as
// the reason the rest wait.
func TestPreemptionKeepsVictimsBudget(t *testing.T) {
	t.Parallel()
	cl, c := drainCell(t)
	ctx := context.Background()
	n1 := newFakeAgent(t, c, "n1", 3000)
	submit(t, cl, "web", "batch", 3, 1)
	waitRunning(t, cl, "web", 3, n1)
	submit(t, cl, "big", "production", 3, 1)
	why := "preemption would exceed the disruption budget of web/g (maxUnavailable 1)"
	servertest.Eventually(t, 20*time.Second, "big blocked by web's budget", func() error {
		if err := syncAll(n1); err != nil {
			return err
		}
		st, _, err := cl.WorkloadStatus(ctx, "big", nil)
		if err != nil {
			return err
		}
		if st.Groups[0].Running != 1 {
			return fmt.Errorf("%d of big running", st.Groups[0].Running)
		}
		if f := st.Groups[0].Failure; f == nil || !strings.Contains(f.Summary, why) {
			return fmt.Errorf("failure %+v does not name the budget", f)
		}
		return nil
	})
	allocs, _, err := cl.Allocations(ctx, "web", nil)
	if err != nil {
		t.Fatal(err)
	}
	preempted := 0
	for _, a := range allocs {
		if a.PreemptedBy != "" {
			preempted++
		}
	}
	if preempted != 1 {
		t.Fatalf("%d replicas of web preempted, its budget allows 1", preempted)
	}
}
