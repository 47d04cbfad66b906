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

const failingWorkload = `
apiVersion: strata.dev/v1
kind: Workload
metadata: {name: %s}
spec:
  groups:
    - name: g
%s      tasks:
        - {name: t, driver: mock, command: ["x"], resources: {cpu: 100m, memory: 64Mi}}
`

func mockNode(id string) *api.Node {
	return &api.Node{ID: id, Name: id, Capacity: api.Resources{CPUMilli: 4000, MemoryBytes: 4 << 30}}
}

func allocsOf(t *testing.T, cl *api.Client, name string) []*api.Allocation {
	t.Helper()
	allocs, _, err := cl.Allocations(context.Background(), name, nil)
	if err != nil {
		t.Fatal(err)
	}
	return allocs
}

func await(t *testing.T, d time.Duration, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// failNewest waits for a live allocation of name and reports it failed.
func failNewest(t *testing.T, cl *api.Client, name string) *api.Allocation {
	t.Helper()
	var live *api.Allocation
	await(t, 10*time.Second, "a live allocation", func() error {
		for _, a := range allocsOf(t, cl, name) {
			if a.DesiredStatus == api.DesiredRun && !a.Terminal() {
				live = a
				return nil
			}
		}
		return fmt.Errorf("none")
	})
	err := cl.UpdateAllocations(context.Background(), []*api.AllocUpdate{{ID: live.ID, ClientStatus: api.AllocFailed, ClientReason: "task t: exit code 1"}})
	if err != nil {
		t.Fatal(err)
	}
	return live
}

// TestRestartNeverEndsDeadWithReason reproduces defect 7 through the
// server: a failed allocation of a restartPolicy-never group used to be
// replaced three times at once and end "dead" with no reason.
func TestRestartNeverEndsDeadWithReason(t *testing.T) {
	c := servertest.Start(t, 1, nil)
	cl := c.AgentClient("n1") // node n1's agent, which also submits
	ctx := context.Background()
	if err := cl.RegisterNode(ctx, mockNode("n1")); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.RegisterWorkload(ctx, []byte(fmt.Sprintf(failingWorkload, "once", "      restartPolicy: {mode: never}\n"))); err != nil {
		t.Fatal(err)
	}
	failed := failNewest(t, cl, "once")
	await(t, 10*time.Second, "the group says why it is dead", func() error {
		st, _, err := cl.WorkloadStatus(ctx, "once", nil)
		if err != nil {
			return err
		}
		g := st.Groups[0]
		if st.Status != api.WorkloadDead || g.Dead != 1 || g.DeadReason != "restartPolicy never and reschedule disabled" {
			return fmt.Errorf("status %s, group %+v", st.Status, g)
		}
		return nil
	})
	if n := len(allocsOf(t, cl, "once")); n != 1 {
		t.Fatalf("%d allocations, want the failed one only", n)
	}
	a, err := cl.Allocation(ctx, failed.ID)
	if err != nil || a.DesiredReason != "restartPolicy never and reschedule disabled" {
		t.Fatalf("allocation %+v, %v: want desired reason", a, err)
	}
	evs, _, err := cl.Events(ctx, "once", nil)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range evs {
		found = found || e.Type == api.EventNotRescheduled && strings.Contains(e.Message, "reschedule disabled")
	}
	if !found {
		t.Fatalf("no %s event among %d", api.EventNotRescheduled, len(evs))
	}
}

// TestRescheduleWaitsItsDelay: the replacement of a failed allocation is
// placed by a follow-up evaluation after the policy's delay, not at once.
func TestRescheduleWaitsItsDelay(t *testing.T) {
	c := servertest.Start(t, 1, func(_ int, cfg *server.Config) {})
	cl := c.AgentClient("n1") // node n1's agent, which also submits
	ctx := context.Background()
	if err := cl.RegisterNode(ctx, mockNode("n1")); err != nil {
		t.Fatal(err)
	}
	const delay = 1500 * time.Millisecond
	policy := "      reschedule: {attempts: 1, interval: 1h, delay: 1500ms, delayFunction: constant}\n"
	if _, err := cl.RegisterWorkload(ctx, []byte(fmt.Sprintf(failingWorkload, "later", policy))); err != nil {
		t.Fatal(err)
	}
	failed := failNewest(t, cl, "later")
	reported := time.Now()
	var replacement *api.Allocation
	await(t, 15*time.Second, "a replacement", func() error {
		for _, a := range allocsOf(t, cl, "later") {
			if a.PreviousAlloc == failed.ID {
				replacement = a
				return nil
			}
		}
		return fmt.Errorf("none yet")
	})
	if waited := time.Since(reported); waited < delay-100*time.Millisecond {
		t.Fatalf("replacement after %s, want at least the %s delay", waited, delay)
	}
	if replacement.CreateTime.Sub(failed.CreateTime) < delay {
		t.Fatalf("replacement created %s after the original, want ≥ %s", replacement.CreateTime.Sub(failed.CreateTime), delay)
	}
	// The second failure exhausts the one attempt: no third allocation.
	failNewest(t, cl, "later")
	await(t, 10*time.Second, "attempts exhausted", func() error {
		st, _, err := cl.WorkloadStatus(ctx, "later", nil)
		if err != nil {
			return err
		}
		if g := st.Groups[0]; g.DeadReason != "reschedule attempts exhausted: 1 in 1h" {
			return fmt.Errorf("group %+v", g)
		}
		return nil
	})
	if n := len(allocsOf(t, cl, "later")); n != 2 {
		t.Fatalf("%d allocations, want 2", n)
	}
}
