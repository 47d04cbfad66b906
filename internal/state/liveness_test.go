package state

import (
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
)

// TestNodeKeepsItsDownsAndLift: the times a node was marked down (flap
// evidence, at most api.MaxNodeDowns) and when its quarantine was lifted
// are the server's: an agent registering again keeps them.
func TestNodeKeepsItsDownsAndLift(t *testing.T) {
	s := New()
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	index := uint64(1)
	write := func(fn func(w *WriteTxn) error) {
		t.Helper()
		mustWrite(t, s, index, fn)
		index++
	}
	write(func(w *WriteTxn) error { return w.UpsertNode(node("n1", 4000)) })
	for i := range api.MaxNodeDowns + 3 {
		at := t0.Add(time.Duration(i) * time.Minute)
		write(func(w *WriteTxn) error {
			return w.MarkNodeDown("n1", "missed heartbeats", at, at.Add(-10*time.Second), 10*time.Second)
		})
		write(func(w *WriteTxn) error { return w.UpsertNode(node("n1", 4000)) }) // the agent comes back
	}
	n := s.Snapshot().Node("n1")
	if len(n.Downs) != api.MaxNodeDowns {
		t.Fatalf("%d downs kept, want %d", len(n.Downs), api.MaxNodeDowns)
	}
	if first, last := n.Downs[0], n.Downs[len(n.Downs)-1]; !first.Equal(t0.Add(3*time.Minute)) || !last.Equal(t0.Add(time.Duration(api.MaxNodeDowns+2)*time.Minute)) {
		t.Fatalf("downs kept from %v to %v, want the newest", first, last)
	}
	lifted := t0.Add(time.Hour)
	write(func(w *WriteTxn) error {
		return w.QuarantineNode("n1", api.Quarantine{Reason: "flaps", Since: t0, Auto: true}, api.DrainSpec{StartedAt: t0, Deadline: t0.Add(time.Hour)})
	})
	write(func(w *WriteTxn) error { return w.LiftQuarantine("n1", lifted) })
	write(func(w *WriteTxn) error { return w.UpsertNode(node("n1", 4000)) })
	n = s.Snapshot().Node("n1")
	if !n.QuarantineLifted.Equal(lifted) || n.Quarantine != nil || len(n.Downs) != api.MaxNodeDowns {
		t.Fatalf("after lift and registration: lifted %v, quarantine %+v, %d downs", n.QuarantineLifted, n.Quarantine, len(n.Downs))
	}
}
