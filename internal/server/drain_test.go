package server_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/server"
	"github.com/strata-dev/strata/internal/server/servertest"
)

const drainWorkload = `
apiVersion: strata.dev/v1
kind: Workload
metadata: {name: %s}
spec:
  priorityClass: %s
  groups:
    - name: g
      replicas: %d
      disruption: {maxUnavailable: %d}
      tasks:
        - {name: t, driver: mock, command: ["x"], resources: {cpu: 1000m, memory: 64Mi}}
`

func submit(t *testing.T, cl *api.Client, name, class string, replicas, maxUnavailable int) {
	t.Helper()
	if _, err := cl.RegisterWorkload(context.Background(), []byte(fmt.Sprintf(drainWorkload, name, class, replicas, maxUnavailable))); err != nil {
		t.Fatalf("register %s: %v", name, err)
	}
}

// waitRunning syncs the agents until workload name has want running
// allocations.
func waitRunning(t *testing.T, cl *api.Client, name string, want int, agents ...*fakeAgent) {
	t.Helper()
	servertest.Eventually(t, 20*time.Second, fmt.Sprintf("%d of %s running", want, name), func() error {
		if err := syncAll(agents...); err != nil {
			return err
		}
		allocs, _, err := cl.Allocations(context.Background(), name, nil)
		if err != nil {
			return err
		}
		running := 0
		for _, a := range allocs {
			if a.DesiredStatus == api.DesiredRun && a.ClientStatus == api.AllocRunning {
				running++
			}
		}
		if running != want {
			return fmt.Errorf("%d running", running)
		}
		return nil
	})
}

// groupView is what one check of a drain sees of a workload's group.
type groupView struct{ serving, moving int }

func viewOf(allocs []*api.Allocation, drained string) groupView {
	var v groupView
	served := map[int]bool{}
	live := func(a *api.Allocation) bool { return a.DesiredStatus == api.DesiredRun && !a.Terminal() }
	for _, a := range allocs {
		if a.DesiredStatus == api.DesiredRun && a.ClientStatus == api.AllocRunning {
			served[a.Index] = true
		}
		if a.NodeID != drained || !live(a) {
			continue
		}
		for _, b := range allocs {
			if b.PreviousAlloc == a.ID && live(b) {
				v.moving++
				break
			}
		}
	}
	v.serving = len(served)
	return v
}

func drainCell(t *testing.T) (*api.Client, *servertest.Cell) {
	c := servertest.Start(t, 1, func(_ int, cfg *server.Config) { cfg.DrainInterval = 50 * time.Millisecond })
	return c.Client(), c
}

// TestDrainMovesEverythingUnderBudgets drains a node of a three-node cell
// whose agents are fakes: every allocation but the system workload's
// moves off, the replacement of each runs before its old allocation
// stops, no group ever has more replicas out of service or moving than
// its maxUnavailable, the node stays ineligible, and the events tell the
// story.
func TestDrainMovesEverythingUnderBudgets(t *testing.T) {
	t.Parallel()
	cl, c := drainCell(t)
	ctx := context.Background()
	n1 := newFakeAgent(t, c, "n1", 16000)
	submit(t, cl, "web", "production", 6, 1)
	submit(t, cl, "jobs", "batch", 4, 2)
	submit(t, cl, "sys", "system", 1, 1)
	waitRunning(t, cl, "web", 6, n1)
	waitRunning(t, cl, "jobs", 4, n1)
	waitRunning(t, cl, "sys", 1, n1)
	n2, n3 := newFakeAgent(t, c, "n2", 16000), newFakeAgent(t, c, "n3", 16000)

	resp, err := cl.DrainNode(ctx, "n1", &api.DrainRequest{Deadline: "1h", KeepSystem: true})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Node.Status != api.NodeDraining || resp.Node.Eligibility != api.NodeIneligible || resp.Node.Drain == nil {
		t.Fatalf("node after drain: %+v", resp.Node)
	}
	budgets := map[string]struct{ replicas, max int }{"web": {6, 1}, "jobs": {4, 2}}
	servertest.Eventually(t, 60*time.Second, "drain of n1 done", func() error {
		if err := syncAll(n1, n2, n3); err != nil {
			return err
		}
		for name, b := range budgets {
			allocs, _, err := cl.Allocations(ctx, name, nil)
			if err != nil {
				return err
			}
			v := viewOf(allocs, "n1")
			if v.moving > b.max || v.serving < b.replicas-b.max {
				t.Fatalf("%s: %d replicas moving and %d serving, budget maxUnavailable %d of %d", name, v.moving, v.serving, b.max, b.replicas)
			}
		}
		st, _, err := cl.NodeStatus(ctx, "n1", nil)
		if err != nil {
			return err
		}
		if st.Node.Drain != nil {
			return fmt.Errorf("still draining, %d allocations left", st.Remaining)
		}
		return nil
	})
	st, _, err := cl.NodeStatus(ctx, "n1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.Node.Status != api.NodeReady || st.Node.Eligibility != api.NodeIneligible {
		t.Fatalf("after the drain: %s %s, want ready and ineligible", st.Node.Status, st.Node.Eligibility)
	}
	if len(st.Allocations) != 1 || st.Allocations[0].Workload != "sys" {
		t.Fatalf("left on n1: %v, want the system workload's allocation only", allocNames(st.Allocations))
	}
	for name, b := range budgets {
		waitRunning(t, cl, name, b.replicas, n1, n2, n3)
	}
	events, _, err := cl.Events(ctx, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	var drainEvents []string
	for _, e := range events {
		if e.Type == api.EventNodeDrain {
			drainEvents = append(drainEvents, e.Message)
		}
	}
	want := "node n1 draining 10 allocations by"
	if len(drainEvents) != 2 || !strings.HasPrefix(drainEvents[0], want) || drainEvents[1] != "node n1 drain complete; the node stays ineligible" {
		t.Fatalf("drain events %q", drainEvents)
	}
	// Nothing new lands on the drained node.
	submit(t, cl, "late", "batch", 3, 1)
	waitRunning(t, cl, "late", 3, n1, n2, n3)
	allocs, _, _ := cl.Allocations(ctx, "late", nil)
	for _, a := range allocs {
		if a.NodeID == "n1" {
			t.Fatalf("allocation %s placed on the ineligible node", a.ID)
		}
	}
}

func allocNames(allocs []*api.Allocation) []string {
	var out []string
	for _, a := range allocs {
		out = append(out, fmt.Sprintf("%s[%d]", a.Workload, a.Index))
	}
	return out
}

// TestDrainDeadlineStopsTheRest: a group whose budget forbids moves stays
// until the drain's deadline, then is stopped and replaced elsewhere.
func TestDrainDeadlineStopsTheRest(t *testing.T) {
	t.Parallel()
	cl, c := drainCell(t)
	ctx := context.Background()
	n1 := newFakeAgent(t, c, "n1", 8000)
	submit(t, cl, "pinned", "batch", 2, 0)
	waitRunning(t, cl, "pinned", 2, n1)
	n2 := newFakeAgent(t, c, "n2", 8000)
	if _, err := cl.DrainNode(ctx, "n1", &api.DrainRequest{Deadline: "1500ms"}); err != nil {
		t.Fatal(err)
	}
	if err := syncAll(n1, n2); err != nil {
		t.Fatal(err)
	}
	if st, _, _ := cl.NodeStatus(ctx, "n1", nil); st.Remaining != 2 {
		t.Fatalf("%d left before the deadline, want both (maxUnavailable 0)", st.Remaining)
	}
	servertest.Eventually(t, 30*time.Second, "the deadline empties n1", func() error {
		if err := syncAll(n1, n2); err != nil {
			return err
		}
		st, _, err := cl.NodeStatus(ctx, "n1", nil)
		if err != nil {
			return err
		}
		if st.Node.Drain != nil || len(st.Allocations) != 0 {
			return fmt.Errorf("%d allocations on n1, drain %+v", len(st.Allocations), st.Node.Drain)
		}
		return nil
	})
	waitRunning(t, cl, "pinned", 2, n1, n2)
}

// TestNodeOpsRefuseWhatCannotWork: field-named errors and conflicts, and
// nothing written.
func TestNodeOpsRefuseWhatCannotWork(t *testing.T) {
	t.Parallel()
	cl, c := drainCell(t)
	ctx := context.Background()
	newFakeAgent(t, c, "n1", 8000)
	conflict := func(err error) bool {
		var ae *api.Error
		return errors.As(err, &ae) && ae.StatusCode == 409
	}
	field := func(err error, path string) bool {
		var ae *api.Error
		if !errors.As(err, &ae) || ae.StatusCode != 400 {
			return false
		}
		for _, f := range ae.Fields {
			if f.Path == path {
				return true
			}
		}
		return false
	}
	if _, err := cl.DrainNode(ctx, "n1", &api.DrainRequest{Deadline: "soon"}); !field(err, "deadline") {
		t.Fatalf("bad deadline: %v", err)
	}
	if _, err := cl.DrainNode(ctx, "n1", &api.DrainRequest{Deadline: "-5m"}); !field(err, "deadline") {
		t.Fatalf("negative deadline: %v", err)
	}
	if _, err := cl.DrainNode(ctx, "n1", &api.DrainRequest{Cancel: true}); !conflict(err) {
		t.Fatalf("cancel without a drain: %v", err)
	}
	if _, err := cl.QuarantineNode(ctx, "n1", &api.QuarantineRequest{}); !field(err, "reason") {
		t.Fatalf("quarantine without a reason: %v", err)
	}
	if _, err := cl.PurgeNode(ctx, "n1"); !conflict(err) {
		t.Fatalf("purge of a live node: %v", err)
	}
	if _, err := cl.DrainNode(ctx, "nope", &api.DrainRequest{}); !api.IsNotFound(err) {
		t.Fatalf("unknown node: %v", err)
	}
	if _, err := cl.QuarantineNode(ctx, "n1", &api.QuarantineRequest{Reason: "disk errors"}); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.SetNodeEligibility(ctx, "n1", true); !conflict(err) {
		t.Fatalf("enable a quarantined node: %v", err)
	}
	if _, err := cl.DrainNode(ctx, "n1", &api.DrainRequest{Cancel: true}); !conflict(err) {
		t.Fatalf("cancel a quarantine's drain: %v", err)
	}
	resp, err := cl.QuarantineNode(ctx, "n1", &api.QuarantineRequest{Lift: true})
	if err != nil {
		t.Fatal(err)
	}
	if n := resp.Node; n.Status != api.NodeReady || n.Eligibility != api.NodeEligible || n.Quarantine != nil || n.Drain != nil {
		t.Fatalf("after lift: %+v", n)
	}
	nodes, _, err := cl.Nodes(ctx, nil)
	if err != nil || len(nodes) != 1 || nodes[0].Status != api.NodeReady {
		t.Fatalf("nodes %+v %v", nodes, err)
	}
}

// TestDrainOfFiftyAllocations drains a node holding the 50 replicas of one
// group under maxUnavailable 1 (the measured case), with agents
// that start and stop tasks as soon as they look: it checks that never more
// than one replica is moving or out of service, and reports the time to
// empty the node (docs/benchmarks.md: the control plane's share of a drain,
// one move after another).
func TestDrainOfFiftyAllocations(t *testing.T) {
	if testing.Short() {
		t.Skip("50 moves one after another: seconds")
	}
	t.Parallel()
	cl, c := drainCell(t)
	ctx := context.Background()
	n1 := newFakeAgent(t, c, "n1", 64000)
	submit(t, cl, "fifty", "production", 50, 1)
	waitRunning(t, cl, "fifty", 50, n1)
	n2, n3 := newFakeAgent(t, c, "n2", 64000), newFakeAgent(t, c, "n3", 64000)

	start := time.Now()
	if _, err := cl.DrainNode(ctx, "n1", &api.DrainRequest{Deadline: "1h"}); err != nil {
		t.Fatal(err)
	}
	worstMoving, worstDown := 0, 0
	servertest.Eventually(t, 120*time.Second, "n1 empty", func() error {
		if err := syncAll(n1, n2, n3); err != nil {
			return err
		}
		allocs, _, err := cl.Allocations(ctx, "fifty", nil)
		if err != nil {
			return err
		}
		v := viewOf(allocs, "n1")
		worstMoving, worstDown = max(worstMoving, v.moving), max(worstDown, 50-v.serving)
		if v.moving > 1 || v.serving < 49 {
			t.Fatalf("%d moving and %d serving of 50 under maxUnavailable 1", v.moving, v.serving)
		}
		st, _, err := cl.NodeStatus(ctx, "n1", nil)
		if err != nil {
			return err
		}
		if len(st.Allocations) > 0 {
			return fmt.Errorf("%d allocations left", len(st.Allocations))
		}
		return nil
	})
	t.Logf("drained 50 allocations (maxUnavailable 1) in %v; at worst %d moving, %d out of service", time.Since(start).Round(time.Millisecond), worstMoving, worstDown)
}

// TestDrainOfAServiceWaitsForReadiness: with agents that report health, a
// replica is served by a healthy allocation. A move's old allocation
// stops only once its replacement is ready, the next move waits for it,
// and the report that it turned ready lets the drain go on.
func TestDrainOfAServiceWaitsForReadiness(t *testing.T) {
	t.Parallel()
	cl, c := drainCell(t)
	ctx := context.Background()
	n1 := newFakeAgent(t, c, "n1", 16000)
	n1.readyAfter = 3
	submit(t, cl, "web", "production", 4, 1)
	servertest.Eventually(t, 20*time.Second, "4 healthy on n1", func() error {
		if err := n1.sync(); err != nil {
			return err
		}
		allocs, _, err := cl.Allocations(ctx, "web", nil)
		if err != nil {
			return err
		}
		if h := healthyIndices(allocs); h != 4 {
			return fmt.Errorf("%d healthy", h)
		}
		return nil
	})
	n2 := newFakeAgent(t, c, "n2", 16000)
	n2.readyAfter = 3
	if _, err := cl.DrainNode(ctx, "n1", &api.DrainRequest{Deadline: "1h"}); err != nil {
		t.Fatal(err)
	}
	servertest.Eventually(t, 30*time.Second, "drain of n1 done", func() error {
		if err := syncAll(n1, n2); err != nil {
			return err
		}
		allocs, _, err := cl.Allocations(ctx, "web", nil)
		if err != nil {
			return err
		}
		if h := healthyIndices(allocs); h < 3 {
			t.Fatalf("%d replicas healthy, want at least replicas − maxUnavailable = 3: %v", h, allocNames(allocs))
		}
		st, _, err := cl.NodeStatus(ctx, "n1", nil)
		if err != nil {
			return err
		}
		if st.Node.Drain != nil {
			return fmt.Errorf("still draining, %d allocations left", st.Remaining)
		}
		return nil
	})
}

// healthyIndices counts the replica indices served by a healthy
// allocation.
func healthyIndices(allocs []*api.Allocation) int {
	served := map[int]bool{}
	for _, a := range allocs {
		if a.Healthy() {
			served[a.Index] = true
		}
	}
	return len(served)
}
