package server_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/server/servertest"
)

// fakeAgent plays a node's agent over the API: it registers its node,
// heartbeats, starts what the server wants running (pending → running)
// and stops what it wants stopped (→ complete), at once.
//
// With readyAfter > 0 it reports health as a real agent does: a started
// allocation runs with its readiness pending, and turns healthy after
// readyAfter more syncs.
type fakeAgent struct {
	cl         *api.Client
	node       *api.Node
	readyAfter int
	pending    map[string]int // syncs each allocation has been running not ready
}

func newFakeAgent(t *testing.T, c *servertest.Cell, id string, cpuMilli int64) *fakeAgent {
	t.Helper()
	return newFakeAgentWith(t, c, id, cpuMilli, func(*api.Node) {})
}

// newFakeAgentWith registers a node that edit changed first (say, one
// that can checkpoint).
func newFakeAgentWith(t *testing.T, c *servertest.Cell, id string, cpuMilli int64, edit func(*api.Node)) *fakeAgent {
	t.Helper()
	cl := c.Client()
	cl.Node = c.NodeIdentity(id)
	n := &api.Node{ID: id, Name: id, Status: api.NodeReady,
		Capacity: api.Resources{CPUMilli: cpuMilli, MemoryBytes: 64 << 30, DiskBytes: 1 << 40, NetMbps: 10000}}
	edit(n)
	if err := cl.RegisterNode(context.Background(), n); err != nil {
		t.Fatalf("register %s: %v", id, err)
	}
	return &fakeAgent{cl: cl, node: n}
}

// sync heartbeats and acts on the node's allocations once.
func (a *fakeAgent) sync() error {
	ctx := context.Background()
	if err := a.cl.Heartbeat(ctx, a.node.ID); err != nil {
		return fmt.Errorf("heartbeat %s: %w", a.node.ID, err)
	}
	allocs, _, err := a.cl.NodeAllocations(ctx, a.node.ID, 0, 0)
	if err != nil {
		return fmt.Errorf("allocations of %s: %w", a.node.ID, err)
	}
	var ups []*api.AllocUpdate
	for _, al := range allocs {
		switch {
		case al.DesiredStatus == api.DesiredStop && (al.ClientStatus == api.AllocPending || al.ClientStatus == api.AllocRunning):
			ups = append(ups, &api.AllocUpdate{ID: al.ID, ClientStatus: api.AllocComplete})
		case al.DesiredStatus == api.DesiredRun && al.ClientStatus == api.AllocPending:
			u := &api.AllocUpdate{ID: al.ID, ClientStatus: api.AllocRunning}
			if a.readyAfter > 0 {
				u.Health = &api.AllocHealth{Status: api.HealthPending, Reason: "readiness check ready: pending"}
			}
			ups = append(ups, u)
		case a.readyAfter > 0 && al.ClientStatus == api.AllocRunning && al.Health != nil && al.Health.Status == api.HealthPending:
			if a.pending == nil {
				a.pending = map[string]int{}
			}
			if a.pending[al.ID]++; a.pending[al.ID] >= a.readyAfter {
				ups = append(ups, &api.AllocUpdate{ID: al.ID, ClientStatus: api.AllocRunning, Health: &api.AllocHealth{Status: api.HealthHealthy}})
			}
		}
	}
	if len(ups) == 0 {
		return nil
	}
	return a.cl.UpdateAllocations(ctx, ups)
}

func syncAll(agents ...*fakeAgent) error {
	for _, a := range agents {
		if err := a.sync(); err != nil {
			return err
		}
	}
	return nil
}
