package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/server/servertest"
)

func testNode(id string) *api.Node {
	return &api.Node{ID: id, Name: id, Capacity: api.Resources{CPUMilli: 1000, MemoryBytes: 1 << 30}}
}

// agentView is what each answer an agent acts on says about the cell.
func agentView(t *testing.T, c *servertest.Cell, i int, nodeID string) []api.QueryMeta {
	t.Helper()
	ctx := context.Background()
	addr := c.Addr(i)
	cl := c.ClientOf(addr)
	cl.Node = &api.NodeIdentity{ID: nodeID, Secret: "cellid-test-node-secret-0123456789abcdef-" + nodeID, JoinToken: c.JoinToken()}
	reg, err := cl.RegisterNodeMeta(ctx, testNode(nodeID))
	if err != nil {
		t.Fatalf("register via %s: %v", addr, err)
	}
	beat, err := cl.HeartbeatMeta(ctx, nodeID)
	if err != nil {
		t.Fatalf("heartbeat via %s: %v", addr, err)
	}
	_, list, err := cl.NodeAllocationsMeta(ctx, nodeID, 0, 0)
	if err != nil {
		t.Fatalf("allocations via %s: %v", addr, err)
	}
	return []api.QueryMeta{reg, beat, list}
}

// TestCellIdentityIsSharedAndDurable: the cell's first leader gives it an
// identity; every server of a cell formed with --bootstrap-expect stamps it
// on registration, heartbeat and allocation-list answers, with an applied
// index; a full restart keeps it; a server started on an empty data dir is
// another cell.
func TestCellIdentityIsSharedAndDurable(t *testing.T) {
	t.Parallel()
	c := servertest.Start(t, 3, nil)
	c.Leader()
	var cell string
	var highest uint64
	for i := range c.Servers {
		c.WaitReady(i)
		for _, m := range agentView(t, c, i, "n1") {
			if m.CellID == "" || m.AppliedIndex == 0 {
				t.Fatalf("server %d answered without a cell stamp: %+v", i+1, m)
			}
			if cell == "" {
				cell = m.CellID
			}
			if m.CellID != cell {
				t.Fatalf("server %d says cell %q, another said %q", i+1, m.CellID, cell)
			}
			highest = max(highest, m.AppliedIndex)
		}
	}

	for i := range c.Servers {
		c.Stop(i)
	}
	for i := range c.Servers {
		c.StartServer(i)
	}
	c.Leader()
	for i := range c.Servers {
		c.WaitReady(i)
		for _, m := range agentView(t, c, i, "n1") {
			if m.CellID != cell {
				t.Fatalf("after a full restart server %d says cell %q, want %q", i+1, m.CellID, cell)
			}
			if m.AppliedIndex < highest {
				t.Fatalf("after a full restart server %d is at index %d, below %d seen before", i+1, m.AppliedIndex, highest)
			}
		}
	}
	events, _, err := api.NewClientFor(c.Addrs()).Events(context.Background(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	created := 0
	for _, e := range events {
		if e.Type == api.EventCellCreated {
			created++
		}
	}
	if created != 1 {
		t.Errorf("%d cell-created events, want 1", created)
	}

	fresh := servertest.Start(t, 1, nil)
	fresh.WaitReady(0)
	m := agentView(t, fresh, 0, "n1")[0]
	if m.CellID == "" || m.CellID == cell {
		t.Fatalf("a server on an empty data dir says cell %q; want a new identity, not %q", m.CellID, cell)
	}
}

// TestAgentNoticesBecomeNodeEvents: what an agent reports when it
// registers is an event of its node, and is not stored on the node.
func TestAgentNoticesBecomeNodeEvents(t *testing.T) {
	t.Parallel()
	c := servertest.Start(t, 1, nil)
	c.WaitReady(0)
	ctx := context.Background()
	cl := c.AgentClient("n2")
	n := testNode("n2")
	n.AgentNotices = []string{"stopped an orphaned task"}
	if _, err := cl.RegisterNodeMeta(ctx, n); err != nil {
		t.Fatal(err)
	}
	servertest.Eventually(t, 10*time.Second, "a node-agent event", func() error {
		events, _, err := cl.Events(ctx, "", nil)
		if err != nil {
			return err
		}
		for _, e := range events {
			if e.Type == api.EventNodeAgent && e.NodeID == "n2" && e.Message == "node n2: stopped an orphaned task" {
				return nil
			}
		}
		return errNoEvent
	})
	nodes, _, err := cl.Nodes(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, got := range nodes {
		if len(got.AgentNotices) != 0 {
			t.Errorf("notices stored on node %s: %v", got.ID, got.AgentNotices)
		}
	}
	n.AgentNotices = []string{"bad\x00byte"}
	if _, err := cl.RegisterNodeMeta(ctx, n); err == nil {
		t.Errorf("a notice with a NUL byte was accepted")
	}
}

var errNoEvent = errorString("no such event yet")

type errorString string

func (e errorString) Error() string { return string(e) }
