// Package eventq is the event queue of a discrete-event simulation: a
// min-heap of events under an order the caller gives (time first, then
// whatever breaks ties deterministically). It holds no clock and no
// goroutine; it is not safe for concurrent use.
package eventq

import "container/heap"

// Queue holds events of type E, the least first.
type Queue[E any] struct{ h items[E] }

// New makes an empty queue ordered by less.
func New[E any](less func(a, b *E) bool) *Queue[E] {
	return &Queue[E]{h: items[E]{less: less}}
}

// Push adds an event.
func (q *Queue[E]) Push(e E) { heap.Push(&q.h, e) }

// Pop removes and returns the least event; the queue must not be empty.
func (q *Queue[E]) Pop() E { return heap.Pop(&q.h).(E) }

// Peek returns the least event without removing it; ok=false when the
// queue is empty.
func (q *Queue[E]) Peek() (e E, ok bool) {
	if len(q.h.es) == 0 {
		return e, false
	}
	return q.h.es[0], true
}

// Len is the number of events queued.
func (q *Queue[E]) Len() int { return len(q.h.es) }

type items[E any] struct {
	es   []E
	less func(a, b *E) bool
}

func (h items[E]) Len() int           { return len(h.es) }
func (h items[E]) Less(i, j int) bool { return h.less(&h.es[i], &h.es[j]) }
func (h items[E]) Swap(i, j int)      { h.es[i], h.es[j] = h.es[j], h.es[i] }
func (h *items[E]) Push(x any)        { h.es = append(h.es, x.(E)) }
func (h *items[E]) Pop() any {
	e := h.es[len(h.es)-1]
	h.es = h.es[:len(h.es)-1]
	return e
}
