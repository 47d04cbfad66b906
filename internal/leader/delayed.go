package leader

import (
	"container/heap"
	"time"

	"github.com/strata-dev/strata/api"
)

// Delayed evaluations: follow-ups the scheduler asked for (a reschedule
// delay, the end of an unknown allocation's grace) wait here until their
// WaitUntil, outside the per-workload queue, so that no newer evaluation
// supersedes them before they are due. A leader that takes over finds
// them pending in the state and delays them again.

// delayLocked parks e until its WaitUntil; b.mu is held.
func (b *evalBroker) delayLocked(e *api.Evaluation) {
	for _, d := range b.delayed {
		if d.ID == e.ID {
			return // the same follow-up, asked for again
		}
	}
	heap.Push(&b.delayed, e)
	b.armLocked()
}

// armLocked sets the timer for the earliest delayed evaluation.
func (b *evalBroker) armLocked() {
	if len(b.delayed) == 0 {
		return
	}
	wait := b.delayed[0].WaitUntil.Sub(b.now())
	if b.timer == nil {
		b.timer = time.AfterFunc(wait, b.releaseDue)
		return
	}
	b.timer.Reset(wait)
}

// releaseDue enqueues every delayed evaluation that is due.
func (b *evalBroker) releaseDue() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.enabled {
		return
	}
	now := b.now()
	for len(b.delayed) > 0 && !b.delayed[0].WaitUntil.After(now) {
		b.enqueueLocked(heap.Pop(&b.delayed).(*api.Evaluation))
	}
	b.armLocked()
}

// Delayed reports how many evaluations wait for their time.
func (b *evalBroker) Delayed() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.delayed)
}

// delayHeap orders evaluations by WaitUntil, then id.
type delayHeap []*api.Evaluation

func (h delayHeap) Len() int { return len(h) }
func (h delayHeap) Less(i, j int) bool {
	if !h[i].WaitUntil.Equal(h[j].WaitUntil) {
		return h[i].WaitUntil.Before(h[j].WaitUntil)
	}
	return h[i].ID < h[j].ID
}
func (h delayHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *delayHeap) Push(x any)   { *h = append(*h, x.(*api.Evaluation)) }
func (h *delayHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}
