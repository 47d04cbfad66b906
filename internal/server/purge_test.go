package server_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/server"
	"github.com/strata-dev/strata/internal/server/servertest"
)

// TestDeadNodeCanBePurged (an observed defect: dead nodes could not be
// removed): a node that went down is purged; it leaves the node list, its
// allocations are lost and replaced elsewhere, and the event says so.
func TestDeadNodeCanBePurged(t *testing.T) {
	t.Parallel()
	c := servertest.Start(t, 1, func(_ int, cfg *server.Config) { cfg.HeartbeatTTL = time.Second })
	cl := c.Client()
	ctx := context.Background()
	n1 := newFakeAgent(t, c, "n1", 8000)
	submit(t, cl, "web", "batch", 2, 1)
	waitRunning(t, cl, "web", 2, n1)
	n2 := newFakeAgent(t, c, "n2", 8000)
	servertest.Eventually(t, 20*time.Second, "n1 down", func() error {
		if err := n2.sync(); err != nil { // n1 stays silent
			return err
		}
		st, _, err := cl.NodeStatus(ctx, "n1", nil)
		if err != nil {
			return err
		}
		if st.Node.Status != api.NodeDown {
			return fmt.Errorf("n1 %s", st.Node.Status)
		}
		return nil
	})
	resp, err := cl.PurgeNode(ctx, "n1")
	if err != nil {
		t.Fatalf("purge a dead node: %v", err)
	}
	if resp.Node != nil {
		t.Fatalf("purge answered the node %+v, want none", resp.Node)
	}
	nodes, _, err := cl.Nodes(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 1 || nodes[0].ID != "n2" {
		t.Fatalf("nodes after purge: %d, want only n2", len(nodes))
	}
	if _, _, err := cl.NodeStatus(ctx, "n1", nil); !api.IsNotFound(err) {
		t.Fatalf("status of a purged node: %v, want not found", err)
	}
	waitRunning(t, cl, "web", 2, n2)
	allocs, _, err := cl.Allocations(ctx, "web", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range allocs {
		if a.NodeID == "n1" && a.ClientStatus != api.AllocLost {
			t.Fatalf("allocation %s on the purged node is %s/%s, want lost", a.ID, a.DesiredStatus, a.ClientStatus)
		}
	}
	events, _, err := cl.Events(ctx, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range events {
		found = found || e.Type == api.EventNodePurged
	}
	if !found {
		t.Fatal("no node-purged event")
	}
}

// TestPurgedWorkloadLeavesListings (an observed defect: allocations of a
// purged workload stayed listed for ever and mixed with a new workload of
// the same name): after `stop --purge`, no listing shows the workload's
// allocations once they stopped, and a new workload of the same name
// lists only its own.
func TestPurgedWorkloadLeavesListings(t *testing.T) {
	t.Parallel()
	c := servertest.Start(t, 1, nil)
	cl := c.Client()
	ctx := context.Background()
	n1 := newFakeAgent(t, c, "n1", 8000)
	submit(t, cl, "web", "batch", 2, 1)
	waitRunning(t, cl, "web", 2, n1)
	old, _, err := cl.Allocations(ctx, "web", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cl.StopWorkload(ctx, "web", true); err != nil {
		t.Fatal(err)
	}
	servertest.Eventually(t, 20*time.Second, "the purged workload's allocations gone", func() error {
		if err := n1.sync(); err != nil {
			return err
		}
		all, _, err := cl.Allocations(ctx, "", nil)
		if err != nil {
			return err
		}
		if len(all) != 0 {
			return fmt.Errorf("%d allocations listed: %v", len(all), allocNames(all))
		}
		st, _, err := cl.NodeStatus(ctx, "n1", nil)
		if err != nil {
			return err
		}
		if len(st.Allocations) != 0 {
			return fmt.Errorf("%d still on n1", len(st.Allocations))
		}
		return nil
	})
	if _, _, err := cl.Allocations(ctx, "web", nil); !api.IsNotFound(err) {
		t.Fatalf("allocations of a purged workload: %v, want not found", err)
	}
	submit(t, cl, "web", "batch", 1, 1)
	waitRunning(t, cl, "web", 1, n1)
	now, _, err := cl.Allocations(ctx, "web", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(now) != 1 {
		t.Fatalf("the new web lists %d allocations, want its 1: %v", len(now), allocNames(now))
	}
	for _, a := range old {
		if a.ID == now[0].ID {
			t.Fatalf("the new web adopted %s of the purged one", a.ID)
		}
	}
}
