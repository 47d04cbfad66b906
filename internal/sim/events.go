package sim

import "container/heap"

// eventKind orders simultaneous events: pods end, machines come and go and
// requests change before new pods arrive, so the pass that follows sees the
// cell as of its time.
type eventKind uint8

const (
	evEnd eventKind = iota
	evNodeAdd
	evNodeUpdate
	evNodeRemove
	evUpdate
	evArrive
)

type event struct {
	time int64
	kind eventKind
	aux  uint32 // evUpdate: the update's index; evEnd: 0, or the start's epoch + 1
	seq  int    // insertion order: FIFO among equal (time, kind)
	ref  int    // pod index, or node event index
}

// eventHeap is a min-heap on (time, kind, seq).
type eventHeap []event

func (h eventHeap) Len() int { return len(h) }
func (h eventHeap) Less(i, j int) bool {
	a, b := &h[i], &h[j]
	if a.time != b.time {
		return a.time < b.time
	}
	if a.kind != b.kind {
		return a.kind < b.kind
	}
	return a.seq < b.seq
}
func (h eventHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *eventHeap) Push(x any)   { *h = append(*h, x.(event)) }
func (h *eventHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// queue is the event queue of one run.
type queue struct {
	h   eventHeap
	seq int
}

func (q *queue) push(t int64, k eventKind, ref int, aux uint32) {
	heap.Push(&q.h, event{time: t, kind: k, aux: aux, seq: q.seq, ref: ref})
	q.seq++
}

func (q *queue) pop() event      { return heap.Pop(&q.h).(event) }
func (q *queue) len() int        { return q.h.Len() }
func (q *queue) peekTime() int64 { return q.h[0].time }
