package sim

import (
	"cmp"
	"errors"
	"slices"

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
//
// Each instant of virtual time is handled in two steps: first every event
// of the instant (ends, machine events, request updates, arrivals — in that
// order), then a pass that offers room to the waiting pods in queue order
// (higher priority first, then the order they joined) and places every pod
// that fits at its turn (waitqueue.go says how without walking them all).
type replayer struct {
	*engine
	pods   []trace.Pod // the run's own copy: updates change requests
	q      queue
	state  []podState
	alloc  []cluster.AllocID
	epoch  []uint32 // counts a pod's starts: an end event of an earlier start is stale
	placed []bool   // placed at least once (pending time recorded)
	wait   *waitQueue
	// constrained marks jobs with a different-machine pod: their pods
	// wait in classes of their own job.
	constrained map[int64]bool
	waits       []waitTime // of first placements of pods submitted in the window
	waiting     int        // pods in the queue
	running     int
	gained      []int32 // nodes that gained room since the last pass
	gainedMark  []bool
	now         int64
	podOf       []int32      // AllocID -> pod index
	run         []int        // scratch: a run of pods for a BatchPlacer
	runPods     []*trace.Pod // their requests
	// walk makes every pass try every waiting pod in queue order, the
	// plain algorithm the wait queue's classes must agree with (tests).
	walk bool
}

// waitTime is how long one pod waited before it first ran.
type waitTime struct {
	seconds  float64
	priority int
}

// replay runs the trace on the virtual clock.
func (e *engine) replay() error {
	r := &replayer{engine: e, pods: slices.Clone(e.cfg.Pods), constrained: map[int64]bool{}, walk: e.walk}
	n := len(r.pods)
	r.state, r.alloc, r.epoch, r.placed = make([]podState, n), make([]cluster.AllocID, n), make([]uint32, n), make([]bool, n)
	r.wait, r.gainedMark = newWaitQueue(n), make([]bool, e.c.NumNodes())
	if err := r.initialNodes(); err != nil {
		return err
	}
	for i := range r.pods {
		p := &r.pods[i]
		if p.DistinctNode && p.Job != 0 {
			r.constrained[p.Job] = true
		}
		created := max(p.Creation, 0)
		if p.Deletion != trace.Absent && p.Deletion <= created {
			e.res.Skipped++
			r.state[i] = podDone
			continue
		}
		e.res.Submitted++
		if p.CarriedOver {
			e.res.CarriedOver++
		}
		r.q.push(created, evArrive, i, 0)
		if p.Deletion != trace.Absent && !p.RunsFor {
			r.q.push(p.Deletion, evEnd, i, 0)
		}
		for k, u := range p.Updates {
			r.q.push(max(u.Time, created), evUpdate, i, uint32(k))
		}
	}
	e.res.TracePending = tracePending(r.pods)
	// Every pod that runs for a time adds its end when it starts.
	total := r.q.len()
	for i := range r.pods {
		if r.pods[i].RunsFor && r.state[i] != podDone {
			total++
		}
	}
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
		if r.q.len() == 0 || r.q.peekTime() != r.now {
			if err := r.pass(); err != nil {
				return err
			}
			if !e.cfg.NoSeries {
				pt := snapshot(e.c, r.now, e.arrivedGPU, e.c.Capacity().GPUMilli, r.waiting)
				pt.Running, pt.Evicted = r.running, e.res.Evicted+e.res.Evictions.Trace
				e.res.Series = append(e.res.Series, pt)
			}
		}
		e.progress(done, max(total, done+r.q.len())) // restarts after evictions add ends
	}
	e.res.EndTime = r.now
	e.res.Running, e.res.Waiting = r.running, r.waiting
	unscheduled := e.res.Pending.Unscheduled
	for i := range r.pods {
		if r.state[i] == podWaiting && !r.placed[i] && !r.pods[i].CarriedOver {
			unscheduled++
		}
	}
	e.res.Pending = pendingStats(r.waits, unscheduled)
	e.res.PendingByPriority = pendingByPriority(r.waits)
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
		r.q.push(ev.Time, kind, i, 0)
	}
	return nil
}

func (r *replayer) handle(ev event) error {
	switch ev.kind {
	case evArrive:
		if r.state[ev.ref] != podFuture {
			return nil
		}
		r.arrivedGPU += r.pods[ev.ref].GPURequestMilli()
		r.enqueue(ev.ref)
	case evEnd:
		return r.end(ev)
	case evUpdate:
		return r.update(ev.ref, r.pods[ev.ref].Updates[ev.aux])
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
		r.gain(ne.Node)
		return err
	case evNodeRemove:
		evicted, err := r.c.SetDown(r.cfg.NodeEvents[ev.ref].Node)
		if err != nil {
			return err
		}
		for _, id := range evicted {
			r.requeue(int(r.podOf[id]))
			r.res.Evictions.Machine++
			r.res.Evicted++
		}
	}
	return nil
}

// enqueue makes pod i wait.
func (r *replayer) enqueue(i int) {
	p := &r.pods[i]
	r.state[i] = podWaiting
	r.wait.push(i, p, r.constrained[p.Job], r.now)
	r.waiting++
}

// requeue makes running pod i wait again after the simulator stopped it
// (its machine went away, or a grown request no longer fits there).
func (r *replayer) requeue(i int) {
	r.running--
	r.epoch[i]++ // its pending end, if it had one, is stale
	r.enqueue(i)
}

// gain notes that node i gained room (or came up): the next pass offers it
// to the classes waiting for room.
func (r *replayer) gain(i int) {
	if !r.gainedMark[i] {
		r.gainedMark[i] = true
		r.gained = append(r.gained, int32(i))
	}
}

// end is a pod's end: at its trace time (aux 0), or Runtime after the
// simulator started it (aux = the start's epoch + 1).
func (r *replayer) end(ev event) error {
	i := ev.ref
	if ev.aux != 0 && ev.aux != r.epoch[i]+1 {
		return nil
	}
	switch r.state[i] {
	case podRunning:
		a := r.alloc[i]
		node := r.c.Alloc(a).Node
		if err := r.c.Release(a); err != nil {
			return err
		}
		r.gain(node)
		r.running--
		if r.pods[i].Phase == "Evicted" && ev.aux == 0 {
			r.res.Evictions.Trace++ // stopped as the trace's scheduler stopped it
		}
	case podWaiting:
		r.wait.remove(i)
		r.waiting--
		if !r.placed[i] && !r.pods[i].CarriedOver {
			r.res.Pending.Unscheduled++
		}
	}
	r.state[i] = podDone
	return nil
}

// update gives pod i a new request: a waiting pod keeps its place in the
// queue; a running pod is resized where it runs when its machine has the
// room, and otherwise stopped and queued again (as Borg does).
func (r *replayer) update(i int, u trace.Update) error {
	p := &r.pods[i]
	shrinks := u.CPUMilli <= p.CPUMilli && u.MemoryMiB <= p.MemoryMiB
	p.CPUMilli, p.MemoryMiB, p.Priority = u.CPUMilli, u.MemoryMiB, u.Priority
	r.res.Updates++
	switch r.state[i] {
	case podWaiting:
		r.wait.move(i, p, r.constrained[p.Job])
	case podRunning:
		a := r.alloc[i]
		node := r.c.Alloc(a).Node
		err := r.c.ResizeAlloc(a, u.CPUMilli, u.MemoryMiB)
		switch {
		case err == nil:
			if !shrinks {
				return nil
			}
		case errors.Is(err, cluster.ErrOvercommit):
			if err := r.c.Release(a); err != nil {
				return err
			}
			r.requeue(i)
			r.res.Evictions.Resized++
			r.res.Evicted++
		default:
			return err
		}
		r.gain(node)
	}
	return nil
}

// pass offers room to the waiting pods in queue order, placing each one
// that fits now.
func (r *replayer) pass() error {
	if r.walk {
		return r.walkPass()
	}
	for _, i := range r.gained {
		r.gainedMark[i] = false
		r.wait.wake(r.c, int(i), r.pods)
	}
	// A woken class fitted nowhere when it fell asleep, and only the nodes
	// that gained room since can fit it now (a pass only takes room): when
	// none of them fits it any more, it fits nowhere, and asking the
	// placer (for the server's scheduler, a walk over every node) is spared.
	gained := r.gained
	defer func() { r.gained = gained[:0] }()
	batcher, _ := r.placer.(cluster.BatchPlacer)
	if r.cfg.Explain != "" {
		batcher = nil // explanations are per pod
	}
	for {
		if err := r.stopped(); err != nil {
			return err
		}
		class, i, ok := r.wait.next()
		if !ok {
			return nil
		}
		if class.woken && !r.fitsAny(gained, i) {
			r.wait.failed(class)
			continue
		}
		if batcher != nil {
			limit := maxRun
			if class.woken {
				limit = min(limit, r.roomOn(gained, i))
			}
			if err := r.startRun(batcher, class, limit); err != nil {
				return err
			}
			continue
		}
		placed, err := r.start(i)
		if err != nil {
			return err
		}
		if placed {
			r.wait.placed(class)
		} else {
			r.wait.failed(class)
		}
	}
}

// fitsAny reports whether waiting pod i fits one of nodes now.
func (r *replayer) fitsAny(nodes []int32, i int) bool {
	for _, n := range nodes {
		if r.c.Fits(int(n), &r.pods[i]) {
			return true
		}
	}
	return false
}

// roomOn is at least how many pods like waiting pod i nodes could take
// now (an upper bound: CPU, memory and GPUs counted apart, one per node
// under the different-machine constraint). A woken class can only use the
// nodes that gained room, so its run is cut to that: the scheduler is not
// handed a thousand replicas for room that holds five, each failed replica
// costing it a search of every node for preemption victims.
func (r *replayer) roomOn(nodes []int32, i int) int {
	p := &r.pods[i]
	total := 0
	for _, k := range nodes {
		n := r.c.Node(int(k))
		if !r.c.Fits(int(k), p) {
			continue
		}
		fit := maxRun
		if p.CPUMilli > 0 {
			fit = min(fit, int(n.CPUFree/p.CPUMilli))
		}
		if p.MemoryMiB > 0 {
			fit = min(fit, int(n.MemFree/p.MemoryMiB))
		}
		if g := p.GPURequestMilli(); g > 0 {
			fit = min(fit, int(n.GPUFreeTotal()/g))
		}
		if p.DistinctNode {
			fit = min(fit, 1)
		}
		if total += fit; total >= maxRun {
			return maxRun
		}
	}
	return max(total, 1)
}

// maxRun bounds how many pods one BatchPlacer decision places.
const maxRun = 1024

// startRun hands a BatchPlacer the waiting pods of class that come next in
// queue order, as one decision, and starts those it placed; the class
// sleeps when some did not fit.
func (r *replayer) startRun(b cluster.BatchPlacer, class *waitClass, limit int) error {
	r.run = r.wait.run(class, limit, r.run[:0])
	r.runPods = r.runPods[:0]
	for _, i := range r.run {
		r.runPods = append(r.runPods, &r.pods[i])
	}
	pls := b.PlaceAll(r.c, r.runPods)
	for k, pl := range pls {
		id, err := r.commit(r.runPods[k], pl)
		if err != nil {
			return err
		}
		r.started(r.run[k], id)
	}
	r.wait.placedRun(class, len(pls))
	if len(pls) < len(r.run) && class.heapAt >= 0 {
		r.wait.failed(class) // its first waiting pod fits nowhere now
	}
	return nil
}

// start places waiting pod i now if some node takes it.
func (r *replayer) start(i int) (bool, error) {
	id, ok, err := r.place(&r.pods[i])
	if err != nil || !ok {
		return false, err
	}
	r.started(i, id)
	return true, nil
}

// started records that waiting pod i runs as allocation id.
func (r *replayer) started(i int, id cluster.AllocID) {
	p := &r.pods[i]
	r.alloc[i], r.state[i] = id, podRunning
	r.waiting--
	r.running++
	for len(r.podOf) <= int(id) {
		r.podOf = append(r.podOf, -1)
	}
	r.podOf[id] = int32(i)
	r.res.Placed++
	if p.RunsFor {
		r.q.push(r.now+p.Runtime, evEnd, i, r.epoch[i]+1)
	}
	if !r.placed[i] {
		r.placed[i] = true
		if !p.CarriedOver {
			r.waits = append(r.waits, waitTime{seconds: float64(r.now - max(p.Creation, 0)), priority: p.Priority})
		}
	}
}

// walkPass is the pass as plainly as it can be done: every waiting pod, in
// queue order, is offered room.
func (r *replayer) walkPass() error {
	for _, i := range r.gained {
		r.gainedMark[i] = false
	}
	r.gained = r.gained[:0]
	var order []int
	for i := range r.pods {
		if r.wait.waiting(i) {
			order = append(order, i)
		}
	}
	slices.SortFunc(order, func(a, b int) int {
		if pa, pb := r.pods[a].Priority, r.pods[b].Priority; pa != pb {
			return pb - pa
		}
		return cmp.Compare(r.wait.pos[a], r.wait.pos[b])
	})
	for _, i := range order {
		if err := r.stopped(); err != nil {
			return err
		}
		placed, err := r.start(i)
		if err != nil {
			return err
		}
		if placed {
			r.wait.remove(i)
		}
	}
	return nil
}
