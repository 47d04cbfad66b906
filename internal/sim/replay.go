package sim

import (
	"errors"

	"github.com/strata-dev/strata/internal/sim/cluster"
	"github.com/strata-dev/strata/internal/sim/trace"
)

// podState is a replayed pod's life.
type podState uint8

const (
	podFuture podState = iota
	podWaiting
	podRunning
	podDone
)

// replayer is the replay-mode state on top of the engine.
type replayer struct {
	*engine
	q       queue
	state   []podState
	alloc   []cluster.AllocID
	placed  []bool // placed at least once (pending time recorded)
	pending []int  // FIFO of waiting pod indices (may hold stale entries)
	waiting int    // live entries in pending
	waits   []float64
	dirty   bool // capacity freed since the last retry pass
	now     int64
	err     error // a policy error met inside tryPlace
	podOf   []int // AllocID -> pod index
}

// replay runs the trace on the virtual clock.
func (e *engine) replay() error {
	pods := e.cfg.Pods
	r := &replayer{engine: e, state: make([]podState, len(pods)), alloc: make([]cluster.AllocID, len(pods)),
		placed: make([]bool, len(pods))}
	if err := r.initialNodes(); err != nil {
		return err
	}
	for i := range pods {
		p := &pods[i]
		created := max(p.Creation, 0)
		if p.Deletion != trace.Absent && p.Deletion <= created {
			e.res.Skipped++
			r.state[i] = podDone
			continue
		}
		e.res.Submitted++
		r.q.push(created, evArrive, i)
		if p.Deletion != trace.Absent {
			r.q.push(p.Deletion, evDelete, i)
		}
	}
	total := r.q.len()
	capa := e.c.Capacity().GPUMilli
	if !e.cfg.NoSeries {
		e.res.Series = append(e.res.Series, snapshot(e.c, 0, 0, capa, 0))
	}
	for done := 1; r.q.len() > 0; done++ {
		if err := e.stopped(); err != nil {
			return err
		}
		ev := r.q.pop()
		r.now = ev.time
		if err := r.handle(ev); err != nil {
			return err
		}
		// Retry the queue once all events of this instant are in.
		if r.q.len() == 0 || r.q.peekTime() != r.now {
			if err := r.retry(); err != nil {
				return err
			}
			if !e.cfg.NoSeries {
				e.res.Series = append(e.res.Series, snapshot(e.c, r.now, e.arrivedGPU, e.c.Capacity().GPUMilli, r.waiting))
			}
		}
		e.progress(done, total)
	}
	e.res.EndTime = r.now
	e.res.Pending = pendingStats(r.waits, e.res.Pending.Unscheduled+r.waiting)
	return nil
}

// initialNodes takes down the nodes whose first event is a later ADD and
// queues every node event.
func (r *replayer) initialNodes() error {
	first := map[int]bool{}
	for i, ev := range r.cfg.NodeEvents {
		if ev.Node < 0 || ev.Node >= r.c.NumNodes() {
			return errors.Join(ErrBadConfig, errors.New("node event for unknown node"))
		}
		if !first[ev.Node] {
			first[ev.Node] = true
			if ev.Kind == trace.NodeAdd && ev.Time > 0 {
				if _, err := r.c.SetDown(ev.Node); err != nil {
					return err
				}
			}
		}
		kind := map[trace.NodeEventKind]eventKind{trace.NodeAdd: evNodeAdd, trace.NodeRemove: evNodeRemove, trace.NodeUpdate: evNodeUpdate}[ev.Kind]
		r.q.push(ev.Time, kind, i)
	}
	return nil
}

func (r *replayer) handle(ev event) error {
	switch ev.kind {
	case evArrive:
		p := &r.cfg.Pods[ev.ref]
		if r.state[ev.ref] != podFuture {
			return nil
		}
		r.arrivedGPU += p.GPURequestMilli()
		r.state[ev.ref] = podWaiting
		r.waiting++
		if !r.tryPlace(ev.ref) {
			r.pending = append(r.pending, ev.ref)
		} else {
			r.waiting--
		}
		return nil
	case evDelete:
		switch r.state[ev.ref] {
		case podRunning:
			if err := r.c.Release(r.alloc[ev.ref]); err != nil {
				return err
			}
			r.dirty = true
		case podWaiting:
			r.waiting--
			if !r.placed[ev.ref] {
				r.res.Pending.Unscheduled++
			}
		}
		r.state[ev.ref] = podDone
		return nil
	case evNodeAdd, evNodeUpdate:
		ne := r.cfg.NodeEvents[ev.ref]
		var err error
		if ev.kind == evNodeAdd {
			err = r.c.SetUp(ne.Node, ne.CPUMilli, ne.MemoryMiB)
		} else if r.c.Node(ne.Node).Up {
			err = r.c.Resize(ne.Node, ne.CPUMilli, ne.MemoryMiB)
		}
		if errors.Is(err, cluster.ErrOvercommit) {
			r.res.Ignored++
			return nil
		}
		r.dirty = true
		return err
	case evNodeRemove:
		evicted, err := r.c.SetDown(r.cfg.NodeEvents[ev.ref].Node)
		if err != nil {
			return err
		}
		for _, id := range evicted {
			i := r.podOf[id]
			r.state[i] = podWaiting
			r.waiting++
			r.pending = append(r.pending, i)
			r.res.Evicted++
		}
		return nil
	}
	return nil
}

// tryPlace places a waiting pod now if some node takes it.
func (r *replayer) tryPlace(i int) bool {
	p := &r.cfg.Pods[i]
	id, ok, err := r.place(p)
	if err != nil || !ok {
		if err != nil {
			r.err = err
		}
		return false
	}
	r.alloc[i], r.state[i] = id, podRunning
	for len(r.podOf) <= int(id) {
		r.podOf = append(r.podOf, -1)
	}
	r.podOf[id] = i
	r.res.Placed++
	if !r.placed[i] {
		r.placed[i] = true
		r.waits = append(r.waits, float64(r.now-max(p.Creation, 0)))
	}
	return true
}

// retry walks the pending queue in FIFO order after capacity was freed,
// placing every pod that now fits (later pods may pass earlier ones that
// still do not fit).
func (r *replayer) retry() error {
	if !r.dirty || r.waiting == 0 {
		r.dirty = false
		return r.takeErr()
	}
	r.dirty = false
	maxFree := r.maxFree()
	kept := r.pending[:0]
	for k, i := range r.pending {
		if err := r.stopped(); err != nil {
			r.pending = append(kept, r.pending[k:]...)
			return err
		}
		if r.state[i] != podWaiting {
			continue // deleted while waiting, or already placed
		}
		p := &r.cfg.Pods[i]
		if p.CPUMilli <= maxFree.CPUMilli && p.MemoryMiB <= maxFree.MemoryMiB && p.GPURequestMilli() <= maxFree.GPUMilli && r.tryPlace(i) {
			r.waiting--
			maxFree = r.maxFree()
			continue
		}
		kept = append(kept, i)
	}
	r.pending = kept
	return r.takeErr()
}

// maxFree is the most of each resource any single up node has free: a pod
// asking for more cannot fit anywhere, so the retry pass skips it cheaply.
func (r *replayer) maxFree() cluster.Resources {
	var m cluster.Resources
	for i := 0; i < r.c.NumNodes(); i++ {
		n := r.c.Node(i)
		if n.Up {
			m.CPUMilli, m.MemoryMiB, m.GPUMilli = max(m.CPUMilli, n.CPUFree), max(m.MemoryMiB, n.MemFree), max(m.GPUMilli, n.GPUFreeTotal())
		}
	}
	return m
}

func (r *replayer) takeErr() error {
	err := r.err
	r.err = nil
	return err
}
