package leader

import (
	"fmt"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/quarantine"
	"github.com/strata-dev/strata/internal/state"
)

// TestQuarantineView: what the leader reads for automatic quarantine. A
// failure is an allocation its tasks failed within the window: not one
// lost with its node, not one its agent fenced, not one that ended before
// the window; a running allocation is a sample; the node's downs, lift and
// automatic quarantine pass through.
func TestQuarantineView(t *testing.T) {
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	lifted := now.Add(-2 * time.Hour)
	st := state.New()
	write := func(index uint64, fn func(w *state.WriteTxn) error) {
		t.Helper()
		if err := st.Write(index, fn); err != nil {
			t.Fatal(err)
		}
	}
	n := &api.Node{ID: "n1", Name: "n1", Status: api.NodeReady, Capacity: api.Resources{CPUMilli: 8000, MemoryBytes: 1 << 30}}
	write(1, func(w *state.WriteTxn) error { return w.UpsertNode(n) })
	write(2, func(w *state.WriteTxn) error {
		return w.MarkNodeDown("n1", "missed heartbeats", now.Add(-10*time.Minute), now.Add(-11*time.Minute), 10*time.Second)
	})
	write(3, func(w *state.WriteTxn) error {
		q := api.Quarantine{Reason: "r", Since: now.Add(-3 * time.Hour), Auto: true}
		if err := w.QuarantineNode("n1", q, api.DrainSpec{StartedAt: q.Since, Deadline: now}); err != nil {
			return err
		}
		if err := w.LiftQuarantine("n1", lifted); err != nil {
			return err
		}
		return w.QuarantineNode("n1", q, api.DrainSpec{StartedAt: q.Since, Deadline: now})
	})
	cases := []struct {
		id, status, reason string
		ended              time.Duration // ago
	}{
		{"running", api.AllocRunning, "", 0},
		{"failed", api.AllocFailed, "task t: exit 1", 5 * time.Minute},
		{"fenced", api.AllocFailed, "task t: " + api.ReasonFenced, 5 * time.Minute},
		{"lost", api.AllocLost, "node down", 5 * time.Minute},
		{"old-failure", api.AllocFailed, "task t: exit 1", 2 * time.Hour},
		{"complete", api.AllocComplete, "", time.Minute},
	}
	write(4, func(w *state.WriteTxn) error {
		for i, c := range cases {
			a := &api.Allocation{ID: c.id, Workload: fmt.Sprint("w", i), Group: "g", NodeID: "n1", DesiredStatus: api.DesiredRun,
				ClientStatus: c.status, ClientReason: c.reason, Resources: api.Resources{CPUMilli: 10}}
			if c.status != api.AllocRunning {
				a.ClientStatusTime = now.Add(-c.ended)
			}
			if err := w.UpsertAlloc(a); err != nil {
				return err
			}
		}
		return nil
	})
	view := quarantineView(st.Snapshot(), now, quarantine.Policy{})
	if len(view) != 1 {
		t.Fatalf("%d nodes, want 1", len(view))
	}
	v := view[0]
	if !v.Quarantined || !v.Auto || !v.Lifted.Equal(lifted) || len(v.Downs) != 1 || !v.Downs[0].Equal(now.Add(-10*time.Minute)) {
		t.Fatalf("node view %+v", v)
	}
	failures := 0
	for _, a := range v.Allocs {
		if a.Failed {
			failures++
		}
	}
	// running, failed, fenced, lost, complete are samples; the old failure ended before the window.
	if len(v.Allocs) != 5 || failures != 1 {
		t.Fatalf("%d samples with %d failures, want 5 with 1: %+v", len(v.Allocs), failures, v.Allocs)
	}
}
