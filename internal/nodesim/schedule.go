package nodesim

import (
	"container/heap"
	"time"
)

// schedule is a min-heap of when each node is next due (to register or to
// heartbeat). It is not safe for concurrent use: the Sim guards it.
type schedule struct{ items dueHeap }

type due struct {
	at   time.Time
	node int
}

type dueHeap []due

func (h dueHeap) Len() int           { return len(h) }
func (h dueHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h dueHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *dueHeap) Push(x any)        { *h = append(*h, x.(due)) }
func (h *dueHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// Add makes node due at at.
func (s *schedule) Add(node int, at time.Time) { heap.Push(&s.items, due{at: at, node: node}) }

// Next returns when the earliest node is due; ok is false when none is.
func (s *schedule) Next() (at time.Time, ok bool) {
	if len(s.items) == 0 {
		return time.Time{}, false
	}
	return s.items[0].at, true
}

// PopDue removes and returns the nodes due at or before now, earliest
// first, at most max of them.
func (s *schedule) PopDue(now time.Time, max int) []due {
	var out []due
	for len(s.items) > 0 && !s.items[0].at.After(now) && len(out) < max {
		out = append(out, heap.Pop(&s.items).(due))
	}
	return out
}

// Len is the number of scheduled nodes.
func (s *schedule) Len() int { return len(s.items) }
