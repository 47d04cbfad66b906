package server

import (
	"fmt"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/fsm"
	"github.com/strata-dev/strata/internal/nodeauth"
	"github.com/strata-dev/strata/internal/state"
)

// bigWorkload asks for replicas of 20 cores: one fits a 32-core node.
const bigWorkload = `
apiVersion: strata.dev/v1
kind: Workload
metadata: {name: %s}
spec:
  groups:
    - name: web
      replicas: %d
      tasks:
        - name: t
          driver: mock
          command: ["x"]
          resources: {cpu: 20, memory: 1Gi}
`

// addNode registers one 32-core node the way registerCell does.
func addNode(tb testing.TB, s *Server, id string) {
	tb.Helper()
	n := &api.Node{ID: id, Name: id, Status: api.NodeReady,
		Capacity: api.Resources{CPUMilli: 32000, MemoryBytes: 128 << 30, DiskBytes: 1 << 40, NetMbps: 10000}}
	key := &state.NodeKey{NodeID: id, Verifier: nodeauth.Verifier(testNodeSecret(id))}
	if _, err := s.propose(&fsm.UpsertNode{Node: n, Key: key}); err != nil {
		tb.Fatal(err)
	}
}

// markRunning reports every pending allocation of workload as running, as
// its agent would.
func markRunning(tb fataler, s *Server, workload string) {
	tb.Helper()
	var ups []*api.AllocUpdate
	for _, a := range s.State().Snapshot().AllocsByWorkload("", workload) {
		if a.ClientStatus == api.AllocPending && a.DesiredStatus == api.DesiredRun {
			ups = append(ups, &api.AllocUpdate{ID: a.ID, ClientStatus: api.AllocRunning})
		}
	}
	if len(ups) == 0 {
		return
	}
	if _, err := s.propose(&fsm.AllocClientUpdate{Updates: ups}); err != nil {
		tb.Fatal(err)
	}
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(tb testing.TB, d time.Duration, what string, cond func() error) {
	tb.Helper()
	deadline := time.Now().Add(d)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("timed out after %v waiting for %s: %v", d, what, err)
		}
		time.Sleep(5 * time.Millisecond) // the poll interval, not a wait for the condition
	}
}

// TestRetriedEvaluationNeverReusesARunningAllocationsID reproduces issue 7
// defect 2: 2 replicas are wanted and 1 fits; a second node joins; the
// retried evaluation must place the second replica under a new id and leave
// the running one alone.
func TestRetriedEvaluationNeverReusesARunningAllocationsID(t *testing.T) {
	s := quietServer(t)
	addNode(t, s, "node-a")
	submit(t, s, fmt.Sprintf(bigWorkload, "w", 2))
	waitPlaced(t, s, "w", 1)
	markRunning(t, s, "w")
	first := s.State().Snapshot().AllocsByWorkload("", "w")
	if len(first) != 1 {
		t.Fatalf("want 1 allocation before the node joins, got %d", len(first))
	}
	running := first[0]

	addNode(t, s, "node-b")
	s.leader.Unblock() // what a node registration does: the blocked evaluation is retried
	waitFor(t, 10*time.Second, "the second replica", func() error {
		live := 0
		for _, a := range s.State().Snapshot().AllocsByWorkload("", "w") {
			if a.DesiredStatus == api.DesiredRun && !a.Terminal() {
				live++
			}
		}
		if live != 2 {
			return fmt.Errorf("%d live allocations, want 2", live)
		}
		return nil
	})
	now := s.State().Snapshot().Alloc(running.ID)
	if now.NodeID != running.NodeID || now.Index != running.Index || now.DesiredStatus != api.DesiredRun || now.ClientStatus != api.AllocRunning {
		t.Fatalf("the running replica was overwritten or stopped:\nbefore %+v\nafter  %+v", running, now)
	}
}
