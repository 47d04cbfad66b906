package nodesim

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/server"
	"github.com/strata-dev/strata/internal/server/servertest"
)

const mockWorkload = `
apiVersion: strata.dev/v1
kind: Workload
metadata: {name: %s}
spec:
  groups:
    - name: g
      replicas: %d
      tasks:
        - {name: t, driver: mock, command: ["x"], resources: {cpu: 100m, memory: 64Mi}%s}
`

// A simulated cell against a real server: the nodes register, heartbeat at
// the interval the server asks, run the allocations the server places and
// report them running, then complete when the workload is stopped, and a
// task that ends by itself is reported too.
func TestSimRunsAllocationsOnARealServer(t *testing.T) {
	cell := servertest.Start(t, 1, func(_ int, c *server.Config) {
		c.HeartbeatTTL = 5 * time.Second
		c.HeartbeatInterval = 200 * time.Millisecond
	})
	cell.WaitReady(0)
	const nodes = 40
	var mu sync.Mutex
	runningAt := map[string]time.Time{}
	sim, err := New(Config{Servers: cell.Addrs(), JoinToken: cell.JoinToken(), Count: nodes, Workers: 8, Watch: true, WatchWait: 2 * time.Second,
		Logger: servertest.Logger(),
		OnRunning: func(a *api.Allocation, at time.Time) {
			mu.Lock()
			runningAt[a.ID] = at
			mu.Unlock()
		}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sim.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		if w := sim.Stats().Watching; w != 0 {
			t.Errorf("%d watches still open after Run returned", w)
		}
	}()

	cl := api.NewClientFor(cell.Addrs())
	servertest.Eventually(t, 20*time.Second, "every node registered and ready", func() error {
		ns, _, err := cl.Nodes(context.Background(), nil)
		if err != nil {
			return err
		}
		ready := 0
		for _, n := range ns {
			if n.Ready() {
				ready++
			}
		}
		if ready != nodes {
			return fmt.Errorf("%d of %d nodes ready", ready, nodes)
		}
		return nil
	})
	reg := func(name string, replicas int, extra string) {
		t.Helper()
		if _, err := cl.RegisterWorkload(context.Background(), []byte(fmt.Sprintf(mockWorkload, name, replicas, extra))); err != nil {
			t.Fatalf("register %s: %v", name, err)
		}
	}
	reg("web", 60, "")
	reg("batch", 5, `, env: {MOCK_RUN_FOR: "300ms"}`)
	waitStatuses(t, cl, "web", 60, api.AllocRunning)
	waitStatuses(t, cl, "batch", 5, api.AllocComplete)

	if _, err := cl.StopWorkload(context.Background(), "web", false); err != nil {
		t.Fatalf("stop web: %v", err)
	}
	waitStatuses(t, cl, "web", 60, api.AllocComplete)

	st := sim.Stats()
	if st.Registered != nodes || st.AllocsRunning < 65 || st.Heartbeats == 0 || st.AllocsFinished < 65 {
		t.Fatalf("stats %+v: want %d registered, >= 65 running and finished, some heartbeats", st, nodes)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(runningAt) < 65 {
		t.Fatalf("OnRunning saw %d allocations, want >= 65", len(runningAt))
	}
}

func waitStatuses(t *testing.T, cl *api.Client, workload string, want int, status string) {
	t.Helper()
	servertest.Eventually(t, 30*time.Second, fmt.Sprintf("%d allocations of %s %s", want, workload, status), func() error {
		allocs, _, err := cl.Allocations(context.Background(), workload, nil)
		if err != nil {
			return err
		}
		got := 0
		for _, a := range allocs {
			if a.ClientStatus == status {
				got++
			}
		}
		if got != want {
			return fmt.Errorf("%d of %d %s", got, len(allocs), status)
		}
		return nil
	})
}

// A large cell is told to heartbeat less often: the nodes follow the
// server's interval, so the heartbeat rate stays under its bound.
func TestSimFollowsTheServersHeartbeatInterval(t *testing.T) {
	cell := servertest.Start(t, 1, func(_ int, c *server.Config) {
		c.HeartbeatTTL = 5 * time.Second
		c.HeartbeatInterval = 50 * time.Millisecond
		c.MaxHeartbeatsPerSecond = 100 // 200 nodes: every 2-2.5s
	})
	cell.WaitReady(0)
	sim, err := New(Config{Servers: cell.Addrs(), JoinToken: cell.JoinToken(), Count: 200, Workers: 16, FirstInterval: 50 * time.Millisecond, Logger: servertest.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sim.Run(ctx) }()
	servertest.Eventually(t, 20*time.Second, "all registered", func() error {
		if st := sim.Stats(); st.Registered != 200 {
			return fmt.Errorf("%d registered", st.Registered)
		}
		return nil
	})
	// Let every node settle on the scaled interval, then measure.
	servertest.Eventually(t, 20*time.Second, "every node on the scaled interval", func() error {
		for _, n := range sim.nodes {
			if n.interval.Load() < 2*time.Second {
				return fmt.Errorf("node %s heartbeats every %v", n.node.ID, n.interval.Load())
			}
		}
		return nil
	})
	before, t0 := sim.Stats().Heartbeats, time.Now()
	servertest.Eventually(t, 20*time.Second, "5s of heartbeats", func() error {
		if time.Since(t0) < 5*time.Second {
			return errors.New("measuring")
		}
		return nil
	})
	rate := float64(sim.Stats().Heartbeats-before) / time.Since(t0).Seconds()
	cancel()
	<-done
	// Unbounded, 200 nodes at 50ms would send 4000/s.
	if rate > 110 {
		t.Fatalf("%.0f heartbeats/s, want at most about 100", rate)
	}
	if rate < 20 {
		t.Fatalf("%.0f heartbeats/s: the nodes stopped heartbeating", rate)
	}
}
