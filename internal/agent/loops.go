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
	ticker := time.NewTicker(a.cfg.HeartbeatInterval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.registerCh:
			register()
		case <-ticker.C:
			stamp, err := a.cfg.API.Heartbeat(ctx, a.nodeID)
			switch {
			case ctx.Err() != nil:
			case err == nil:
				if _, recovered := a.acceptStamp(stamp, "heartbeat"); recovered {
					register()
				}
			case errors.Is(err, ErrNodeUnknown):
				a.log.Warn("server forgot the node; registering again")
				register()
			default:
				a.log.Warn("heartbeat failed", "err", err)
			}
		}
	}
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
		allocs, next, stamp, err := a.cfg.API.NodeAllocations(ctx, a.nodeID, index, a.cfg.WatchWait)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if errors.Is(err, ErrNodeUnknown) {
				a.kick(a.registerCh)
			}
			delay = retryBackoff(delay)
			a.log.Warn("watch allocations failed; retrying", "err", err, "retry_in", delay)
			sleepCtx(ctx, delay)
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

// reconcile starts, stops and forgets runners to match the server's list.
func (a *Agent) reconcile(allocs []*api.Allocation) {
	seen := make(map[string]bool, len(allocs))
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, alloc := range allocs {
		seen[alloc.ID] = true
		ar, ok := a.allocs[alloc.ID]
		if ok {
			ar.setAllocation(alloc)
			ar.takeUpMigration(alloc)
			if alloc.DesiredStatus == api.DesiredStop {
				ar.stop()
				ar.persist()
			}
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
		a.log.Info("starting allocation", "alloc", alloc.ID, "workload", alloc.Workload, "tasks", len(ar.tasks))
		a.allocs[alloc.ID] = ar
		a.dirty[alloc.ID] = true
		ar.persist()
		ar.start()
	}
	if a.orphans != nil {
		listed := make(map[string]*api.Allocation, len(allocs))
		for _, alloc := range allocs {
			listed[alloc.ID] = alloc
		}
		a.settleOrphans(listed)
	}
	for id, ar := range a.allocs {
		if seen[id] {
			continue
		}
		ar.mu.Lock()
		already := ar.forgotten
		ar.mu.Unlock()
		if already || ar.migratingNow() {
			continue // a migration in flight settles it (migrate_source.go)
		}
		a.log.Info("server no longer lists allocation; stopping and forgetting it", "alloc", id)
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
	id := ar.id()
	ar.mu.Lock()
	ar.forgotten = true
	ar.mu.Unlock()
	if err := a.db.DeleteAlloc(id); err != nil {
		a.log.Error("forget alloc", "alloc", id, "err", err)
	}
	if err := os.RemoveAll(ar.dir); err != nil {
		a.log.Error("remove alloc dir", "alloc", id, "err", err)
	}
	a.mu.Lock()
	delete(a.allocs, id)
	delete(a.dirty, id)
	delete(a.lastSent, id)
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
