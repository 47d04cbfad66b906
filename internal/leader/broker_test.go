package leader

import (
	"context"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
)

func ev(id, workload string, prio int, createIndex uint64) *api.Evaluation {
	return &api.Evaluation{ID: id, Workload: workload, Priority: prio, CreateIndex: createIndex, Status: api.EvalPending}
}

func dequeue(t *testing.T, b *evalBroker) *api.Evaluation {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	e, err := b.Dequeue(ctx)
	if err != nil {
		t.Fatalf("dequeue: %v", err)
	}
	return e
}

func assertEmpty(t *testing.T, b *evalBroker) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if e, err := b.Dequeue(ctx); err == nil {
		t.Fatalf("dequeued %s, want nothing ready", e.ID)
	}
}

func TestBrokerOrdersByPriorityThenAge(t *testing.T) {
	b := newEvalBroker()
	b.SetEnabled(true)
	b.Enqueue(ev("low", "a", 100, 1))
	b.Enqueue(ev("high-new", "b", 1000, 3))
	b.Enqueue(ev("high-old", "c", 1000, 2))
	for _, want := range []string{"high-old", "high-new", "low"} {
		if got := dequeue(t, b).ID; got != want {
			t.Fatalf("dequeued %s, want %s", got, want)
		}
	}
}

func TestBrokerSerializesAndSupersedesPerWorkload(t *testing.T) {
	b := newEvalBroker()
	b.SetEnabled(true)
	b.Enqueue(ev("e1", "w", 100, 1))
	first := dequeue(t, b)
	b.Enqueue(ev("e2", "w", 100, 2))
	b.Enqueue(ev("e3", "w", 100, 3))
	assertEmpty(t, b) // w is in flight
	sup := b.Ack(first, false)
	if len(sup) != 1 || sup[0].ID != "e2" {
		t.Fatalf("superseded = %v, want [e2]", sup)
	}
	if got := dequeue(t, b).ID; got != "e3" {
		t.Fatalf("dequeued %s, want e3", got)
	}
}

func TestBrokerBlockedUntilUnblock(t *testing.T) {
	b := newEvalBroker()
	b.SetEnabled(true)
	b.Enqueue(ev("e1", "w", 100, 1))
	e := dequeue(t, b)
	b.Ack(e, true)
	assertEmpty(t, b)
	if _, _, blocked := b.Stats(); blocked != 1 {
		t.Fatalf("blocked = %d, want 1", blocked)
	}
	b.Unblock()
	if got := dequeue(t, b).ID; got != "e1" {
		t.Fatalf("dequeued %s after unblock, want e1", got)
	}
}

func TestBrokerDisabledDropsEverything(t *testing.T) {
	b := newEvalBroker()
	b.Enqueue(ev("e1", "w", 100, 1)) // not leader yet: ignored
	b.SetEnabled(true)
	assertEmpty(t, b)
	b.Enqueue(ev("e2", "w", 100, 2))
	b.SetEnabled(false)
	b.SetEnabled(true)
	assertEmpty(t, b)
}

func TestHeartbeatsExpire(t *testing.T) {
	h := newHeartbeats(HeartbeatPolicy{MinTTL: 10 * time.Second}, nil)
	t0 := time.Unix(1000, 0)
	h.Reset("a", t0)
	h.Reset("b", t0.Add(5*time.Second))
	if got := h.Expired(t0.Add(9 * time.Second)); len(got) != 0 {
		t.Fatalf("expired early: %v", got)
	}
	if got := h.Expired(t0.Add(11 * time.Second)); len(got) != 1 || got[0] != "a" {
		t.Fatalf("expired = %v, want [a]", got)
	}
	if got := h.Expired(t0.Add(11 * time.Second)); len(got) != 0 {
		t.Fatalf("expired twice: %v", got)
	}
	h.Reset("b", t0.Add(14*time.Second))
	if got := h.Expired(t0.Add(16 * time.Second)); len(got) != 0 {
		t.Fatalf("a renewed node expired: %v", got)
	}
}

func TestBrokerRequeuesWhenCapacityChangedDuringRun(t *testing.T) {
	b := newEvalBroker()
	b.SetEnabled(true)
	b.Enqueue(ev("e1", "w", 100, 1))
	e := dequeue(t, b)
	b.Unblock() // an allocation finished while e1 was being scheduled
	b.Ack(e, true)
	if got := dequeue(t, b).ID; got != "e1" {
		t.Fatalf("dequeued %s, want e1 re-queued", got)
	}
}

func TestBrokerIgnoresLateAckFromOldTerm(t *testing.T) {
	b := newEvalBroker()
	b.SetEnabled(true)
	b.Enqueue(ev("old", "w", 100, 1))
	old := dequeue(t, b)
	b.SetEnabled(false) // leadership lost and regained
	b.SetEnabled(true)
	b.Enqueue(ev("new", "w", 100, 2))
	cur := dequeue(t, b)
	b.Enqueue(ev("next", "w", 100, 3))
	if sup := b.Ack(old, false); len(sup) != 0 {
		t.Fatalf("late ack took %v", sup)
	}
	b.Ack(cur, false)
	if got := dequeue(t, b).ID; got != "next" {
		t.Fatalf("dequeued %s, want next", got)
	}
}

// TestBrokerKeepsNamespacesApart: evaluations of workloads of one name in
// two namespaces neither serialize nor supersede each other.
func TestBrokerKeepsNamespacesApart(t *testing.T) {
	b := newEvalBroker()
	b.SetEnabled(true)
	a, other := ev("a", "web", 100, 1), ev("b", "web", 100, 2)
	a.Namespace, other.Namespace = "team-a", "team-b"
	b.Enqueue(a)
	b.Enqueue(other)
	got := map[string]bool{dequeue(t, b).ID: true, dequeue(t, b).ID: true}
	if !got["a"] || !got["b"] {
		t.Fatalf("dequeued %v, want both a and b", got)
	}
}
