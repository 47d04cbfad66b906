package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/server"
	"github.com/strata-dev/strata/internal/server/servertest"
)

// failAll reports every allocation of agent a that the server wants
// running as failed by its task.
func failAll(t *testing.T, a *fakeAgent) int {
	t.Helper()
	ctx := context.Background()
	allocs, _, err := a.cl.NodeAllocations(ctx, a.node.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var ups []*api.AllocUpdate
	for _, al := range allocs {
		if al.DesiredStatus == api.DesiredRun && !al.Terminal() {
			ups = append(ups, &api.AllocUpdate{ID: al.ID, ClientStatus: api.AllocFailed, ClientReason: "task t: exit code 139 (segfault)"})
		}
	}
	if err := a.cl.UpdateAllocations(ctx, ups); err != nil {
		t.Fatal(err)
	}
	return len(ups)
}

// TestAutoQuarantineOfAFailingNode: n1's allocations of two workloads all
// fail while the rest of the cell runs clean; the leader quarantines n1 on
// its own with the numbers in its reason and its event, drains it, and
// after an operator lifts it, the same old failures do not quarantine it
// again.
func TestAutoQuarantineOfAFailingNode(t *testing.T) {
	t.Parallel()
	c := servertest.Start(t, 1, func(_ int, cfg *server.Config) {
		cfg.DrainInterval = 50 * time.Millisecond
		cfg.QuarantineInterval = time.Hour // the test asks for each judgement
	})
	cl, ctx := c.Client(), context.Background()
	n1 := newFakeAgent(t, c, "n1", 6000)
	submit(t, cl, "a", "batch", 3, 1)
	submit(t, cl, "b", "batch", 3, 1)
	waitRunning(t, cl, "a", 3, n1)
	waitRunning(t, cl, "b", 3, n1)
	n2, n3, n4 := newFakeAgent(t, c, "n2", 16000), newFakeAgent(t, c, "n3", 16000), newFakeAgent(t, c, "n4", 16000)
	submit(t, cl, "c", "batch", 9, 1)
	waitRunning(t, cl, "c", 9, n1, n2, n3, n4)

	srv := c.Servers[0]
	srv.CheckQuarantines()
	if st, _, _ := cl.NodeStatus(ctx, "n1", nil); st.Node.Quarantine != nil {
		t.Fatalf("n1 quarantined before anything failed: %s", st.Node.Quarantine.Reason)
	}

	if n := failAll(t, n1); n != 6 {
		t.Fatalf("failed %d allocations on n1, want 6", n)
	}
	srv.CheckQuarantines()
	st, _, err := cl.NodeStatus(ctx, "n1", nil)
	if err != nil {
		t.Fatal(err)
	}
	q := st.Node.Quarantine
	// (Its drain may be done already: every allocation on it failed.)
	if q == nil || !q.Auto || st.Node.Status != api.NodeQuarantined || st.Node.Eligibility != api.NodeIneligible {
		t.Fatalf("n1 after its failures: status %s, eligibility %s, quarantine %+v", st.Node.Status, st.Node.Eligibility, q)
	}
	for _, want := range []string{"6 of 6 failed", "2 workloads", "the other nodes 0 of 9", "at least 5 failures"} {
		if !strings.Contains(q.Reason, want) {
			t.Errorf("reason %q does not say %q", q.Reason, want)
		}
	}
	events, _, err := cl.Events(ctx, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range events {
		if e.Type == api.EventNodeQuarantine && strings.HasPrefix(e.Message, "node n1 quarantined automatically: allocations fail far more often") {
			found = true
		}
	}
	if !found {
		t.Fatal("no node-quarantine event with the evidence")
	}
	for _, n := range []string{"n2", "n3", "n4"} {
		if st, _, _ := cl.NodeStatus(ctx, n, nil); st.Node.Quarantine != nil {
			t.Fatalf("%s quarantined too", n)
		}
	}

	// Its work is replaced elsewhere (the drain), and nothing new lands on it.
	waitRunning(t, cl, "a", 3, n1, n2, n3, n4)
	waitRunning(t, cl, "b", 3, n1, n2, n3, n4)
	servertest.Eventually(t, 20*time.Second, "n1 empty", func() error {
		if err := syncAll(n1, n2, n3, n4); err != nil {
			return err
		}
		st, _, err := cl.NodeStatus(ctx, "n1", nil)
		if err != nil {
			return err
		}
		if len(st.Allocations) > 0 {
			return fmt.Errorf("%d allocations on n1", len(st.Allocations))
		}
		return nil
	})

	// An operator lifts it: the failures before the lift are not weighed again.
	if _, err := cl.QuarantineNode(ctx, "n1", &api.QuarantineRequest{Lift: true}); err != nil {
		t.Fatal(err)
	}
	srv.CheckQuarantines()
	st, _, err = cl.NodeStatus(ctx, "n1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.Node.Quarantine != nil || st.Node.Eligibility != api.NodeEligible || st.Node.QuarantineLifted.IsZero() {
		t.Fatalf("n1 after the lift: quarantine %+v, eligibility %s, lifted %v", st.Node.Quarantine, st.Node.Eligibility, st.Node.QuarantineLifted)
	}
}
