package leader

import (
	"container/heap"
	"context"
	"sync"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/fsm"
)

// evalBroker queues evaluations for the scheduler workers on the leader.
//
// At most one evaluation per workload is in flight: the scheduler reconciles
// the whole workload, so evaluations of a workload are serialized, and a
// newer pending evaluation supersedes older pending ones (they are handed
// back by Ack so the worker can mark them complete). Evaluations whose plan
// left placements unfilled are parked as blocked until capacity changes.
//
// All methods are safe for concurrent use and never block, except Dequeue.
type evalBroker struct {
	mu         sync.Mutex
	enabled    bool
	ready      evalHeap
	waiting    map[string]*api.Evaluation   // workload → newest eval queued behind an in-flight one
	queued     map[string]*api.Evaluation   // workload → eval in ready
	inflight   map[string]string            // workload → eval id
	superseded map[string][]*api.Evaluation // workload → evals replaced by a newer one
	blocked    map[string]*api.Evaluation   // workload → blocked eval
	// unblocks counts Unblock calls; an evaluation that ends blocked is
	// re-queued instead of parked when capacity changed while it ran.
	unblocks   uint64
	dequeuedAt map[string]uint64 // eval id → unblocks when it was dequeued
	wake       chan struct{}
	// delayed holds evaluations whose WaitUntil is in the future, earliest
	// first (delayed.go); they are enqueued when due.
	delayed delayHeap
	now     func() time.Time
	timer   *time.Timer
}

func newEvalBroker() *evalBroker {
	b := &evalBroker{wake: make(chan struct{}, 1), now: time.Now}
	b.reset()
	return b
}

func (b *evalBroker) reset() {
	b.ready = nil
	b.waiting = map[string]*api.Evaluation{}
	b.queued = map[string]*api.Evaluation{}
	b.inflight = map[string]string{}
	b.superseded = map[string][]*api.Evaluation{}
	b.blocked = map[string]*api.Evaluation{}
	b.dequeuedAt = map[string]uint64{}
	b.delayed = nil
	if b.timer != nil {
		b.timer.Stop()
	}
}

// SetEnabled turns the broker on (leadership gained) or off (lost); turning
// it off drops everything queued, since the next leader restores from state.
func (b *evalBroker) SetEnabled(on bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.enabled = on
	if !on {
		b.reset()
	}
	b.signal()
}

func (b *evalBroker) signal() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// Enqueue adds a pending evaluation.
func (b *evalBroker) Enqueue(e *api.Evaluation) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.enabled {
		return
	}
	if e.WaitUntil.After(b.now()) {
		b.delayLocked(e)
		return
	}
	b.enqueueLocked(e)
}

func (b *evalBroker) enqueueLocked(e *api.Evaluation) {
	w := evalKey(e)
	if old := b.blocked[w]; old != nil && old.ID != e.ID {
		// A fresh evaluation of the workload covers what the blocked one wanted.
		b.superseded[w] = append(b.superseded[w], old)
		delete(b.blocked, w)
	}
	if _, busy := b.inflight[w]; busy {
		if old := b.waiting[w]; old != nil && old.ID != e.ID {
			b.superseded[w] = append(b.superseded[w], old)
		}
		b.waiting[w] = e
		return
	}
	if old := b.queued[w]; old != nil {
		if old.ID == e.ID {
			return
		}
		// Replace the queued one in place: keep the higher priority.
		b.superseded[w] = append(b.superseded[w], old)
		b.ready.replace(old, e)
		b.queued[w] = e
		return
	}
	b.queued[w] = e
	heap.Push(&b.ready, e)
	b.signal()
}

// Dequeue waits for the highest-priority ready evaluation.
func (b *evalBroker) Dequeue(ctx context.Context) (*api.Evaluation, error) {
	for {
		b.mu.Lock()
		if b.enabled && b.ready.Len() > 0 {
			e := heap.Pop(&b.ready).(*api.Evaluation)
			delete(b.queued, evalKey(e))
			b.inflight[evalKey(e)] = e.ID
			b.dequeuedAt[e.ID] = b.unblocks
			if b.ready.Len() > 0 {
				b.signal()
			}
			b.mu.Unlock()
			return e, nil
		}
		b.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-b.wake:
		}
	}
}

// Ack finishes an in-flight evaluation; blocked parks it until Unblock. It
// returns the evaluations that were superseded while it ran, for the caller
// to mark complete.
func (b *evalBroker) Ack(e *api.Evaluation, blocked bool) []*api.Evaluation {
	b.mu.Lock()
	defer b.mu.Unlock()
	w := evalKey(e)
	if b.inflight[w] != e.ID {
		return nil // a late Ack from a previous leadership term: not ours
	}
	delete(b.inflight, w)
	missedUnblock := b.unblocks != b.dequeuedAt[e.ID]
	delete(b.dequeuedAt, e.ID)
	sup := b.superseded[w]
	delete(b.superseded, w)
	if !b.enabled {
		return sup
	}
	next := b.waiting[w]
	delete(b.waiting, w)
	if blocked && next == nil {
		if missedUnblock {
			b.enqueueLocked(e) // capacity changed while it ran: try again now
		} else {
			b.blocked[w] = e
		}
	}
	if next != nil {
		if blocked {
			sup = append(sup, e)
		}
		b.enqueueLocked(next)
	}
	return sup
}

// Unblock re-queues every blocked evaluation: capacity changed, so they may
// fit now.
func (b *evalBroker) Unblock() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.enabled {
		return
	}
	b.unblocks++
	blocked := b.blocked
	b.blocked = map[string]*api.Evaluation{}
	for _, e := range blocked {
		b.enqueueLocked(e)
	}
}

// Stats reports queue sizes.
func (b *evalBroker) Stats() (ready, inflight, blocked int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.ready.Len(), len(b.inflight), len(b.blocked)
}

// evalHeap orders evaluations by priority (high first), then age.
type evalHeap []*api.Evaluation

func (h evalHeap) Len() int { return len(h) }
func (h evalHeap) Less(i, j int) bool {
	if h[i].Priority != h[j].Priority {
		return h[i].Priority > h[j].Priority
	}
	return h[i].CreateIndex < h[j].CreateIndex
}
func (h evalHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *evalHeap) Push(x any)   { *h = append(*h, x.(*api.Evaluation)) }
func (h *evalHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

func (h *evalHeap) replace(old, e *api.Evaluation) {
	for i, x := range *h {
		if x == old {
			(*h)[i] = e
			heap.Fix(h, i)
			return
		}
	}
	heap.Push(h, e)
}

// evalKey is the broker's key of an evaluation's workload: evaluations of
// one workload are serialized and supersede each other, never those of a
// workload of the same name in another namespace.
func evalKey(e *api.Evaluation) string { return fsm.Qualified(e.Namespace, e.Workload) }
