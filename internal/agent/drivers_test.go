package agent

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/drivers"
	"github.com/strata-dev/strata/internal/agent/drivers/containerd/ctrtest"
	"github.com/strata-dev/strata/internal/agent/drivers/mock"
)

// TestNodeAdvertisesItsDrivers: the registered node lists the drivers the
// agent offers; containerd only when its socket answers, and a task that
// needs it fails with the reason the driver is missing.
func TestNodeAdvertisesItsDrivers(t *testing.T) {
	t.Parallel()
	srv := newFakeServer()
	missing := filepath.Join(t.TempDir(), "no-containerd.sock")
	ag := startAgent(t, srv, t.TempDir(), func(c *Config) { c.ContainerdSocket = missing })
	n := srv.node(ag.NodeID())
	if slices.Contains(n.Drivers, "containerd") || !slices.Contains(n.Drivers, "mock") || !slices.IsSorted(n.Drivers) {
		t.Fatalf("drivers = %v, want mock (and exec where cgroups work), sorted, no containerd", n.Drivers)
	}
	alloc := newAlloc(ag.NodeID()).mockTask("t", nil).last(func(tk *api.Task) { tk.Driver, tk.Image = "containerd", "busybox:1" }).build()
	srv.put(alloc)
	up := waitTask(t, srv, alloc.ID, "t", "failed", func(u *api.AllocUpdate, _ *api.TaskState) bool { return u.ClientStatus == api.AllocFailed })
	if !strings.Contains(up.ClientReason, `driver "containerd" unavailable`) || !strings.Contains(up.ClientReason, missing) {
		t.Errorf("reason %q, want the driver unavailable and the socket named", up.ClientReason)
	}
}

func TestNodeAdvertisesContainerdWhenItAnswers(t *testing.T) {
	socket := ctrtest.Socket(t)
	ns := ctrtest.Namespace(t, socket)
	srv := newFakeServer()
	ag := startAgent(t, srv, t.TempDir(), func(c *Config) { c.ContainerdSocket, c.ContainerdNamespace = socket, ns })
	if n := srv.node(ag.NodeID()); !slices.Contains(n.Drivers, "containerd") {
		t.Fatalf("drivers = %v, want containerd", n.Drivers)
	}
}

// progressDriver starts its tasks after telling Progress it is pulling,
// and only once release is closed.
type progressDriver struct {
	*mock.Driver
	release chan struct{}
}

func (d progressDriver) StartTask(ctx context.Context, cfg *drivers.TaskConfig) (*drivers.TaskHandle, error) {
	cfg.Progress("pulling image r:1: 1/2 layers, 1.0MiB/2.0MiB")
	select {
	case <-d.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return d.Driver.StartTask(ctx, cfg)
}

func TestSlowStartShowsProgressAsTheTaskMessage(t *testing.T) {
	t.Parallel()
	srv := newFakeServer()
	d := progressDriver{Driver: mock.New(), release: make(chan struct{})}
	ag := startAgent(t, srv, t.TempDir(), func(c *Config) { c.Drivers = map[string]Driver{"slow": d} })
	alloc := newAlloc(ag.NodeID()).mockTask("t", map[string]string{"MOCK_RUN_FOR": "1h"}).last(func(tk *api.Task) { tk.Driver = "slow" }).build()
	srv.put(alloc)
	waitTask(t, srv, alloc.ID, "t", "progress message", func(u *api.AllocUpdate, ts *api.TaskState) bool {
		return ts.State == api.TaskPending && ts.Message == "pulling image r:1: 1/2 layers, 1.0MiB/2.0MiB"
	})
	close(d.release)
	waitTask(t, srv, alloc.ID, "t", "running without the message", func(u *api.AllocUpdate, ts *api.TaskState) bool {
		return ts.State == api.TaskRunning && ts.Message == ""
	})
}
