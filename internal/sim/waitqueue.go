package sim

import (
	"container/heap"
	"slices"
	"strings"

	"github.com/strata-dev/strata/internal/sim/cluster"
	"github.com/strata-dev/strata/internal/sim/trace"
)

// waitQueue holds the pods waiting for room, in the order they are offered
// it: higher priority first, then the order they joined the queue. A pass
// (see replayer.pass) offers room to waiting pods in that order and places
// every pod that fits at its turn. Walking every waiting pod on every pass
// costs O(waiting) even when nothing fits, which on a saturated cell with
// tens of thousands of waiting pods and a pass at every instant a task ends
// is the whole run. So pods wait in classes of pods that fit exactly the
// same nodes (same request, priority and, where the different-machine
// constraint can apply, job), FIFO inside a class:
//
//   - a class whose first pod did not fit is asleep: its later pods would
//     not fit either, as placements only take room;
//   - it wakes only when a node that gained room since (a release, a node
//     up or grown, a resize down) now fits its first pod — so a pass costs
//     O(nodes that gained room × asleep classes) cheap checks plus one
//     placement attempt per pod placed and per class woken;
//   - awake classes are merged by their first pod's (priority, arrival),
//     which is exactly the order of the walk over every waiting pod.
//
// TestWaitQueueIsTheWalk compares it with that walk.
type waitQueue struct {
	classes map[classKey]*waitClass
	awake   awakeHeap
	asleep  []*waitClass
	seq     uint64
	// per pod: the class it waits in (nil: not waiting), its place, and
	// the virtual time it joined the queue
	in     []*waitClass
	pos    []uint64
	joined []int64
}

// classKey is what decides which nodes a pod fits.
type classKey struct {
	cpu, mem int64
	numGPU   int
	gpuMilli int64
	spec     string
	priority int
	job      int64 // only where the different-machine constraint can apply
}

type waitEntry struct {
	pod int32
	seq uint64
}

type waitClass struct {
	key      classKey
	pods     []waitEntry // sorted by seq; [head:] may still wait
	head     int
	heapAt   int // index in awake, -1 when not there
	sleepAt  int // index in asleep, -1 when not there
	priority int
	// woken says the class slept and was woken by a node that gained
	// room: only such a node can fit it (see replayer.pass).
	woken bool
}

func newWaitQueue(pods int) *waitQueue {
	return &waitQueue{classes: map[classKey]*waitClass{}, in: make([]*waitClass, pods), pos: make([]uint64, pods), joined: make([]int64, pods)}
}

func keyOf(p *trace.Pod, constrained bool) classKey {
	k := classKey{cpu: p.CPUMilli, mem: p.MemoryMiB, numGPU: p.NumGPU, gpuMilli: p.PerGPUMilli(), priority: p.Priority}
	if len(p.GPUSpec) > 0 {
		k.spec = strings.Join(p.GPUSpec, "|")
	}
	if constrained {
		k.job = p.Job
	}
	return k
}

// waiting reports whether pod i waits.
func (q *waitQueue) waiting(i int) bool { return q.in[i] != nil }

// push queues pod i (with request p) at time now, behind every pod queued
// before it.
func (q *waitQueue) push(i int, p *trace.Pod, constrained bool, now int64) {
	q.seq++
	q.joined[i] = now
	q.insert(i, keyOf(p, constrained), q.seq)
}

// move queues pod i again under its new request p, at the place it had.
func (q *waitQueue) move(i int, p *trace.Pod, constrained bool) {
	seq := q.pos[i]
	q.remove(i)
	q.insert(i, keyOf(p, constrained), seq)
}

// remove takes pod i out of the queue (its entry is dropped lazily).
func (q *waitQueue) remove(i int) { q.in[i] = nil }

func (q *waitQueue) insert(i int, k classKey, seq uint64) {
	c, ok := q.classes[k]
	if !ok {
		// A new class has not failed yet: it is offered room at the next pass.
		c = &waitClass{key: k, heapAt: -1, sleepAt: -1, priority: k.priority, pods: []waitEntry{{pod: int32(i), seq: seq}}}
		q.classes[k] = c
		q.in[i], q.pos[i] = c, seq
		heap.Push(&q.awake, c)
		return
	}
	e := waitEntry{pod: int32(i), seq: seq}
	if n := len(c.pods); n == c.head || c.pods[n-1].seq < seq {
		c.pods = append(c.pods, e)
	} else {
		at, _ := slices.BinarySearchFunc(c.pods[c.head:], seq, func(e waitEntry, s uint64) int {
			switch {
			case e.seq < s:
				return -1
			case e.seq > s:
				return 1
			}
			return 0
		})
		c.pods = slices.Insert(c.pods, c.head+at, e)
		if at == 0 && c.heapAt >= 0 {
			heap.Fix(&q.awake, c.heapAt)
		}
	}
	q.in[i], q.pos[i] = c, seq
}

// first drops the class's entries that no longer wait and returns its
// first waiting pod (ok=false when none is left).
func (q *waitQueue) first(c *waitClass) (int, bool) {
	for c.head < len(c.pods) {
		e := c.pods[c.head]
		if q.in[e.pod] == c && q.pos[e.pod] == e.seq {
			return int(e.pod), true
		}
		c.head++
	}
	return -1, false
}

// advance takes the class's first pod out of the queue (it was placed).
func (q *waitQueue) advance(c *waitClass) {
	q.in[c.pods[c.head].pod] = nil
	c.head++
	if c.head > 64 && 2*c.head > len(c.pods) {
		c.pods = c.pods[:copy(c.pods, c.pods[c.head:])]
		c.head = 0
	}
}

func (q *waitQueue) drop(c *waitClass) {
	if c.sleepAt >= 0 {
		q.unsleep(c)
	}
	if c.heapAt >= 0 {
		heap.Remove(&q.awake, c.heapAt)
	}
	delete(q.classes, c.key)
}

func (q *waitQueue) sleep(c *waitClass) {
	c.sleepAt = len(q.asleep)
	q.asleep = append(q.asleep, c)
}

func (q *waitQueue) unsleep(c *waitClass) {
	last := q.asleep[len(q.asleep)-1]
	q.asleep[c.sleepAt], last.sleepAt = last, c.sleepAt
	q.asleep = q.asleep[:len(q.asleep)-1]
	c.sleepAt = -1
}

// wake offers node i, which gained room, to the asleep classes: each whose
// first pod now fits there is offered room at the next pass.
func (q *waitQueue) wake(c *cluster.Cluster, i int, pods []trace.Pod) {
	n := c.Node(i)
	if !n.Up {
		return
	}
	for k := 0; k < len(q.asleep); {
		w := q.asleep[k]
		if w.key.cpu > n.CPUFree || w.key.mem > n.MemFree {
			k++
			continue
		}
		p, ok := q.first(w)
		switch {
		case !ok:
			q.drop(w) // takes w out of asleep: k now holds another class
		case c.Fits(i, &pods[p]):
			q.unsleep(w)
			w.woken = true
			heap.Push(&q.awake, w)
		default:
			k++
		}
	}
}

// next returns the awake class whose first pod comes first, and that pod;
// ok=false when no class is awake. Classes left with no pod are dropped.
func (q *waitQueue) next() (*waitClass, int, bool) {
	for q.awake.Len() > 0 {
		c := q.awake[0]
		head := c.head
		p, ok := q.first(c)
		switch {
		case !ok:
			q.drop(c)
		case c.head != head: // its first entries had left: it may come later now
			heap.Fix(&q.awake, 0)
		default:
			return c, p, true
		}
	}
	return nil, -1, false
}

// placed records that c's first pod was placed: c stays awake with its
// next pod, or is dropped when it has none.
func (q *waitQueue) placed(c *waitClass) {
	q.advance(c)
	if _, ok := q.first(c); !ok {
		q.drop(c)
		return
	}
	heap.Fix(&q.awake, c.heapAt)
}

// run lists, into, up to limit waiting pods of class c (the awake class
// that comes first), from its first, for one decision of a BatchPlacer:
// those ahead of the first pod of every other awake class, where pods of
// one priority that joined the queue at the same second count as
// simultaneous (their order is the trace file's, which the server, whose
// workers take evaluations in parallel, does not keep either). (A runner-up
// whose first entries have left may end the run early; that is only a
// shorter run.)
func (q *waitQueue) run(c *waitClass, limit int, into []int) []int {
	var bound *waitEntry
	boundPriority := 0
	for _, k := range []int{1, 2} {
		if k < len(q.awake) {
			o := q.awake[k]
			e := &o.pods[o.head]
			if bound == nil || o.priority > boundPriority || (o.priority == boundPriority && e.seq < bound.seq) {
				bound, boundPriority = e, o.priority
			}
		}
	}
	for k := c.head; k < len(c.pods) && len(into) < limit; k++ {
		e := c.pods[k]
		if bound != nil && boundPriority == c.priority && q.joined[bound.pod] < q.joined[e.pod] {
			break
		}
		if q.in[e.pod] == c && q.pos[e.pod] == e.seq {
			into = append(into, int(e.pod))
		}
	}
	return into
}

// placedRun records that the first n waiting pods of c were placed.
func (q *waitQueue) placedRun(c *waitClass, n int) {
	for ; n > 0; n-- {
		if _, ok := q.first(c); !ok {
			break
		}
		q.advance(c)
	}
	if _, ok := q.first(c); !ok {
		q.drop(c)
		return
	}
	heap.Fix(&q.awake, c.heapAt)
}

// failed puts c to sleep: its first pod fits nowhere.
func (q *waitQueue) failed(c *waitClass) {
	heap.Remove(&q.awake, c.heapAt)
	c.woken = false
	q.sleep(c)
}

// awakeHeap orders awake classes by their first entry: higher priority,
// then earlier in the queue. Entries that no longer wait are dropped when
// a class is looked at (first), which can only move it later, so the
// heap may hold a class too early; next re-checks the top.
type awakeHeap []*waitClass

func (h awakeHeap) Len() int { return len(h) }
func (h awakeHeap) Less(i, j int) bool {
	a, b := h[i], h[j]
	if a.priority != b.priority {
		return a.priority > b.priority
	}
	return a.pods[a.head].seq < b.pods[b.head].seq
}
func (h awakeHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].heapAt, h[j].heapAt = i, j
}
func (h *awakeHeap) Push(x any) {
	c := x.(*waitClass)
	c.heapAt = len(*h)
	*h = append(*h, c)
}
func (h *awakeHeap) Pop() any {
	old := *h
	c := old[len(old)-1]
	c.heapAt = -1
	*h = old[:len(old)-1]
	return c
}
