package nodesim

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-dev/strata/api"
)

// simNode is one simulated agent. Its registrations and heartbeats run on
// the Sim's two worker pools, one at a time (a node is in the registration
// queue or the heartbeat schedule, never both); its watch runs in its own
// goroutine.
type simNode struct {
	sim    *Sim
	index  int
	node   *api.Node
	client *api.Client

	registered   atomic.Bool
	registeredCh chan struct{} // closed at the first registration
	queued       atomic.Bool   // in the registration queue
	interval     atomicDuration
	due          atomicDuration // when the current heartbeat was due, since sim start

	mu       sync.Mutex
	allocs   map[string]*simAlloc
	reportMu sync.Mutex // one report at a time
}

// register registers the node (again, when the server forgot it), then
// schedules its first heartbeat.
func (n *simNode) register(ctx context.Context) {
	st := &n.sim.stats
	for ctx.Err() == nil {
		resp, err := n.client.RegisterNodeTimed(ctx, n.node)
		if err != nil {
			if ctx.Err() == nil {
				st.registerErrors.Add(1)
				n.sim.failed(&st.registerCauses, "register", n.node.ID, err)
				sleep(ctx, time.Second+rand.N(time.Second))
			}
			continue
		}
		st.registrations.Add(1)
		n.queued.Store(false)
		if !n.registered.Swap(true) {
			st.registered.Add(1)
			close(n.registeredCh)
		}
		interval := n.setInterval(resp.Interval())
		// The first heartbeat falls anywhere in the interval, so nodes
		// registered together do not heartbeat together.
		n.schedule(rand.N(interval) + 1)
		return
	}
}

// queueRegister asks for the node to be registered again (the server
// forgot it); a node is in the registration queue at most once.
func (n *simNode) queueRegister() {
	if !n.queued.Swap(true) {
		n.sim.registerQ <- n.index
	}
}

// heartbeat sends one heartbeat and schedules the next.
func (n *simNode) heartbeat(ctx context.Context) {
	st := &n.sim.stats
	if n.queued.Load() {
		return // registering again; that schedules the next heartbeat
	}
	late := time.Since(n.sim.start) - n.due.Load()
	if late > n.interval.Load() {
		st.lateHeartbeats.Add(1)
	}
	st.maxLate.storeMax(late)
	resp, err := n.client.NodeHeartbeat(ctx, n.node.ID)
	switch {
	case err == nil:
		st.heartbeats.Add(1)
		n.schedule(n.setInterval(resp.Interval()))
	case ctx.Err() != nil:
	case errors.Is(err, api.ErrNodeUnknown):
		st.reregistrations.Add(1)
		n.queueRegister()
	default:
		st.heartbeatErrors.Add(1)
		n.sim.failed(&st.heartbeatCauses, "heartbeat", n.node.ID, err)
		n.schedule(min(n.interval.Load(), time.Second))
	}
}

func (n *simNode) setInterval(told time.Duration) time.Duration {
	if told <= 0 {
		told = n.sim.cfg.FirstInterval
	}
	n.interval.Store(told)
	return told
}

func (n *simNode) schedule(after time.Duration) {
	n.due.Store(time.Since(n.sim.start) + after)
	n.sim.reschedule(n.index, after)
}

// watch follows the node's allocations with blocking queries, as the
// agent's watch loop does, and reconciles the simulated tasks with them.
func (n *simNode) watch(ctx context.Context) {
	select {
	case <-n.registeredCh:
	case <-ctx.Done():
		return
	}
	st := &n.sim.stats
	st.watching.Add(1)
	defer st.watching.Add(-1)
	var index uint64
	var delay time.Duration
	for ctx.Err() == nil {
		allocs, next, err := n.client.NodeAllocations(ctx, n.node.ID, index, n.sim.cfg.WatchWait)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			st.watchErrors.Add(1)
			n.sim.failed(&st.watchCauses, "watch", n.node.ID, err)
			if errors.Is(err, api.ErrNodeUnknown) {
				n.queueRegister()
			}
			delay = min(max(2*delay, 100*time.Millisecond), 5*time.Second)
			sleep(ctx, delay+rand.N(delay))
			continue
		}
		delay = 0
		if next < index {
			next = 0 // the server's index went back: resync from scratch
		}
		index = next
		n.report(ctx, n.reconcile(ctx, allocs))
	}
}

// report sends status changes, retrying until they are acknowledged.
// Reports of one node are sent one at a time.
func (n *simNode) report(ctx context.Context, changes []*simAlloc) {
	if len(changes) == 0 {
		return
	}
	n.reportMu.Lock()
	defer n.reportMu.Unlock()
	n.mu.Lock()
	updates := make([]*api.AllocUpdate, 0, len(changes))
	for _, a := range changes {
		updates = append(updates, a.updateLocked())
	}
	n.mu.Unlock()
	st := &n.sim.stats
	var delay time.Duration
	for {
		err := n.client.UpdateAllocations(ctx, updates)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return
		}
		st.reportErrors.Add(1)
		n.sim.failed(&st.reportCauses, "report", n.node.ID, err)
		delay = min(max(2*delay, 100*time.Millisecond), 5*time.Second)
		sleep(ctx, delay)
	}
	now := time.Now()
	n.mu.Lock()
	defer n.mu.Unlock()
	for i, u := range updates {
		a := changes[i]
		switch u.ClientStatus {
		case api.AllocRunning:
			if !a.reportedRunning {
				a.reportedRunning = true
				st.running.Add(1)
				if n.sim.cfg.OnRunning != nil {
					n.sim.cfg.OnRunning(a.alloc, now)
				}
			}
		case api.AllocComplete, api.AllocFailed:
			st.finished.Add(1)
		}
	}
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
