package agent

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"sort"
	"time"

	"github.com/strata-dev/strata/api"
)

// registerLoop registers the node, then heartbeats; it registers again
// whenever the server says it does not know the node.
func (a *Agent) registerLoop(ctx context.Context) {
	register := func() {
		var delay time.Duration
		for {
			n := a.Node()
			n.AgentNotices = a.pendingNotices()
			stamp, err := a.cfg.API.RegisterNode(ctx, n)
			if err == nil {
				// A refused registration still registered the node with
				// that server; heartbeats go on checking, and the first
				// answer of a server of this node's cell registers again.
				if ok, _ := a.acceptStamp(stamp, "registration"); ok {
					a.log.Info("node registered", "cell", stamp.CellID, "index", stamp.Index)
					if !a.noticesDelivered(len(n.AgentNotices)) {
						a.kick(a.registerCh) // notices made by this very answer
					}
					a.actedOn()
					a.markAllDirty() // a server that forgot the node forgot its reports too
				}
				return
			}
			if ctx.Err() != nil {
				return
			}
			delay = retryBackoff(delay)
			a.log.Warn("register node failed; retrying", "err", err, "retry_in", delay)
			if !sleepCtx(ctx, delay) {
				return
			}
		}
	}
	register()
	// Heartbeats run in their own goroutines, at most maxProbes at once:
	// while the server is unreachable one is started every retry period,
	// each bounded by the normal period, so the first one sent after the
	// network heals answers at once instead of queueing behind a request
	// hung on a cut connection.
	const maxProbes = 8
	type outcome struct {
		interval  time.Duration // the period the server asked for; 0: keep
		recovered bool          // the answer ended a refusal (cellguard.go)
		err       error
	}
	results := make(chan outcome, maxProbes)
	inflight := 0
	failing := false
	ticker := time.NewTicker(a.cfg.HeartbeatInterval)
	defer ticker.Stop()
	period := a.cfg.HeartbeatInterval
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.registerCh:
			register()
		case <-ticker.C:
			if inflight >= maxProbes || (!failing && inflight > 0) {
				continue
			}
			inflight++
			timeout := period
			go func() {
				beat, recovered, err := a.heartbeat(ctx, timeout)
				results <- outcome{beat.Interval, recovered, err}
			}()
		case r := <-results:
			inflight--
			err := r.err
			switch {
			case err == nil:
				// A large cell tells its nodes to heartbeat less often, so
				// its heartbeat rate stays bounded (server.HeartbeatPolicy).
				if r.interval > 0 && r.interval != period {
					period = r.interval
					ticker.Reset(period)
				}
				if failing {
					a.log.Info("heartbeat answered again")
					a.kick(a.reconnected)
					ticker.Reset(period)
				}
				failing = false
				if r.recovered {
					register() // carries the refusal's notice to the cell's events
				}
			case ctx.Err() != nil:
			case errors.Is(err, ErrNodeUnknown):
				a.log.Warn("server forgot the node; registering again")
				register()
			default:
				if !failing {
					// Try often while cut off, so the agent learns of the
					// network's return (and the server's decisions) quickly.
					ticker.Reset(retryInterval(a.cfg.HeartbeatInterval))
				}
				failing = true
				a.log.Warn("heartbeat failed", "err", err)
			}
		}
	}
}

// retryInterval is the heartbeat period while heartbeats fail: a tenth of
// the normal one, at least 100 ms.
func retryInterval(normal time.Duration) time.Duration { return max(normal/10, 100*time.Millisecond) }

// heartbeat tells the server the node lives and renews the node's lease,
// when the server grants one, from the moment the request was sent. An
// answer the cell guard refuses (another cell, a server behind) renews
// nothing. recovered reports that the answer ended a refusal.
func (a *Agent) heartbeat(ctx context.Context, timeout time.Duration) (beat Beat, recovered bool, err error) {
	// A heartbeat hung on a cut connection ends after timeout (the normal
	// period): it may otherwise wait out TCP's retransmission backoff.
	ctx, cancel := context.WithTimeout(ctx, max(timeout, 200*time.Millisecond))
	defer cancel()
	sent := a.lease.clock()
	beat, err = a.cfg.API.Heartbeat(ctx, a.nodeID)
	if err != nil {
		return Beat{}, false, err
	}
	accepted, recovered := a.acceptStamp(beat.Stamp, "heartbeat")
	if !accepted {
		return Beat{}, recovered, nil // no lease, no timing from a server this node may not trust
	}
	if beat.Lease > 0 {
		a.lease.renew(sent, beat.Lease)
		a.writeFences()
	}
	return beat, recovered, nil
}

func (a *Agent) markAllDirty() {
	a.mu.Lock()
	for id := range a.allocs {
		a.dirty[id] = true
	}
	a.lastSent = map[string]string{}
	a.mu.Unlock()
	a.kick(a.dirtyCh)
}

// watchLoop follows the node's allocations with blocking queries and
// reconciles the runners with them. While the server is unreachable it
// retries with backoff and leaves every task as it is.
func (a *Agent) watchLoop(ctx context.Context) {
	var index uint64
	var delay time.Duration
	for ctx.Err() == nil {
		allocs, next, stamp, err := a.watchOnce(ctx, index)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if errors.Is(err, ErrNodeUnknown) {
				a.kick(a.registerCh)
			}
			delay = retryBackoff(delay)
			a.log.Warn("watch allocations failed; retrying", "err", err, "retry_in", delay)
			select { // a heartbeat answered again: ask at once
			case <-ctx.Done():
			case <-time.After(delay):
			case <-a.reconnected:
				delay = 0
			}
			continue
		}
		if ok, recovered := a.acceptStamp(stamp, "allocation list"); !ok {
			// Leave every task as it is; ask again from scratch, so that
			// a server of this cell answers with the whole list at once.
			index = 0
			delay = retryBackoff(delay)
			sleepCtx(ctx, delay)
			continue
		} else if recovered {
			a.kick(a.registerCh)
		}
		delay = 0
		if next < index {
			next = 0 // the server's index went back (restored state): resync from scratch
		}
		index = next
		a.reconcile(allocs)
		a.actedOn()
	}
}

// watchOnce is one blocking query. A query in flight while the server was
// unreachable may hang on a dead connection after the network heals; a
// heartbeat that answers again cancels it, so the agent learns the
// server's decisions (which copy stays) within a heartbeat of reconnecting.
func (a *Agent) watchOnce(ctx context.Context, index uint64) ([]*api.Allocation, uint64, Stamp, error) {
	qctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-a.reconnected:
			cancel()
			a.kick(a.reconnected) // the retry below must not wait its backoff
		case <-done:
		}
	}()
	return a.cfg.API.NodeAllocations(qctx, a.nodeID, index, a.cfg.WatchWait)
}

// reconcile starts, stops and forgets runners to match the server's list.
// It decides under a.mu and acts after: directories, bbolt writes and the
// runners' hooks run without the agent's lock (lock order: agent.go).
func (a *Agent) reconcile(allocs []*api.Allocation) {
	type change struct {
		ar    *allocRunner
		alloc *api.Allocation
	}
	var updated, started []change
	var forgotten []*allocRunner
	seen := make(map[string]bool, len(allocs))
	a.mu.Lock()
	for _, alloc := range allocs {
		seen[alloc.ID] = true
		if ar, ok := a.allocs[alloc.ID]; ok {
			updated = append(updated, change{ar, alloc})
			continue
		}
		if alloc.DesiredStatus != api.DesiredRun || alloc.Terminal() {
			continue
		}
		ar, err := a.newAllocRunner(alloc, a.adoptOrphans(alloc))
		if err != nil {
			a.log.Error("cannot run allocation", "alloc", alloc.ID, "err", err)
			continue
		}
		a.allocs[alloc.ID] = ar
		a.dirty[alloc.ID] = true
		started = append(started, change{ar, alloc})
	}
	if a.orphans != nil {
		listed := make(map[string]*api.Allocation, len(allocs))
		for _, alloc := range allocs {
			listed[alloc.ID] = alloc
		}
		a.settleOrphans(listed)
	}
	for id, ar := range a.allocs {
		if !seen[id] {
			forgotten = append(forgotten, ar)
		}
	}
	a.mu.Unlock()

	for _, c := range updated {
		c.ar.setAllocation(c.alloc)
		c.ar.takeUpMigration(c.alloc)
		if c.alloc.DesiredStatus == api.DesiredStop {
			c.ar.stopWhenTold()
			c.ar.persist()
		}
	}
	for _, c := range started {
		a.log.Info("starting allocation", "alloc", c.alloc.ID, "workload", c.alloc.Workload, "tasks", len(c.ar.tasks))
		if err := c.ar.prepare(); err != nil {
			a.log.Error("cannot prepare allocation", "alloc", c.alloc.ID, "err", err)
		}
		c.ar.persist()
		c.ar.start()
	}
	for _, ar := range forgotten {
		ar.mu.Lock()
		already := ar.forgotten
		ar.mu.Unlock()
		if already || ar.migratingNow() {
			continue // a migration in flight settles it (migrate_source.go)
		}
		a.log.Info("server no longer lists allocation; stopping and forgetting it", "alloc", ar.id())
		ar.stop()
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			a.forget(ar)
		}()
	}
	a.kick(a.dirtyCh)
}

// forget waits for a stopped allocation's tasks to end, then deletes its
// state and files.
func (a *Agent) forget(ar *allocRunner) {
	ar.wait()
	if a.ctx.Err() != nil {
		return // shutting down mid-stop: the next agent finishes the job
	}
	a.drop(ar)
}

// drop deletes an allocation's record and files and its runner: it is
// not this node's any more (forgotten, or moved by a migration). Nothing
// is reported for it after.
func (a *Agent) drop(ar *allocRunner) {
	id := ar.id()
	if err := ar.forgetRecord(); err != nil {
		a.log.Error("forget alloc", "alloc", id, "err", err)
	}
	if err := os.RemoveAll(ar.dir); err != nil {
		a.log.Error("remove alloc dir", "alloc", id, "err", err)
	}
	a.mu.Lock()
	if a.allocs[id] == ar {
		delete(a.allocs, id)
		delete(a.dirty, id)
		delete(a.lastSent, id)
	}
	a.mu.Unlock()
}

// syncLoop sends the status of changed allocations in batches, only when it
// differs from what the server last acknowledged.
func (a *Agent) syncLoop(ctx context.Context) {
	var delay time.Duration
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.dirtyCh:
		}
		if !sleepCtx(ctx, a.cfg.UpdateBatch) {
			return
		}
		if a.refusing() {
			// Reports wait for a server of this node's cell; the answer
			// that ends the refusal re-registers, which resends them all.
			continue
		}
		updates, keys := a.pendingUpdates()
		if len(updates) == 0 {
			continue
		}
		if err := a.cfg.API.UpdateAllocations(ctx, updates); err != nil {
			if ctx.Err() != nil {
				return
			}
			delay = retryBackoff(delay)
			a.log.Warn("report allocation status failed; retrying", "err", err, "allocs", len(updates), "retry_in", delay)
			a.mu.Lock()
			for _, u := range updates {
				a.dirty[u.ID] = true
			}
			a.mu.Unlock()
			if sleepCtx(ctx, delay) {
				a.kick(a.dirtyCh)
			}
			continue
		}
		delay = 0
		a.mu.Lock()
		for i, u := range updates {
			a.lastSent[u.ID] = keys[i]
		}
		a.mu.Unlock()
	}
}

func (a *Agent) pendingUpdates() ([]*api.AllocUpdate, []string) {
	a.mu.Lock()
	runners := make([]*allocRunner, 0, len(a.dirty))
	for id := range a.dirty {
		if ar, ok := a.allocs[id]; ok {
			runners = append(runners, ar)
		}
	}
	a.dirty = map[string]bool{}
	last := make(map[string]string, len(runners))
	for _, ar := range runners {
		last[ar.id()] = a.lastSent[ar.id()]
	}
	a.mu.Unlock()
	sort.Slice(runners, func(i, j int) bool { return runners[i].id() < runners[j].id() })
	var updates []*api.AllocUpdate
	var keys []string
	for _, ar := range runners {
		u := ar.update()
		data, _ := json.Marshal(u)
		if last[u.ID] == string(data) {
			continue
		}
		updates = append(updates, u)
		keys = append(keys, string(data))
	}
	return updates, keys
}
