package leader

import (
	"testing"
	"time"
)

// TestBrokerHoldsDelayedEvaluations: an evaluation with a future
// WaitUntil is not dequeued before it, is not superseded by newer
// evaluations of its workload meanwhile, and is asked for once.
func TestBrokerHoldsDelayedEvaluations(t *testing.T) {
	b := newEvalBroker()
	b.SetEnabled(true)
	later := ev("follow-up", "w", 100, 1)
	later.WaitUntil = time.Now().Add(150 * time.Millisecond)
	b.Enqueue(later)
	b.Enqueue(later) // asked for again by another evaluation
	if got := b.Delayed(); got != 1 {
		t.Fatalf("delayed = %d, want 1", got)
	}
	assertEmpty(t, b)
	now := ev("now", "w", 100, 2)
	b.Enqueue(now)
	if got := dequeue(t, b).ID; got != "now" {
		t.Fatalf("dequeued %s, want now", got)
	}
	if sup := b.Ack(now, false); len(sup) != 0 {
		t.Fatalf("superseded %v, want nothing (the follow-up is not due)", sup)
	}
	start := time.Now()
	got := dequeue(t, b)
	if got.ID != "follow-up" || time.Now().Before(later.WaitUntil) {
		t.Fatalf("dequeued %s after %s, want follow-up at or after its WaitUntil", got.ID, time.Since(start))
	}
	if b.Delayed() != 0 {
		t.Fatalf("delayed = %d after release, want 0", b.Delayed())
	}
}

func TestBrokerDropsDelayedOnLeadershipLoss(t *testing.T) {
	b := newEvalBroker()
	b.SetEnabled(true)
	e := ev("follow-up", "w", 100, 1)
	e.WaitUntil = time.Now().Add(50 * time.Millisecond)
	b.Enqueue(e)
	b.SetEnabled(false)
	b.SetEnabled(true)
	assertEmpty(t, b)
	if b.Delayed() != 0 {
		t.Fatalf("delayed = %d, want 0 after losing leadership", b.Delayed())
	}
}
