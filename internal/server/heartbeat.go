package server

import (
	"context"
	"math/rand/v2"
	"sort"
	"sync"
	"time"

	"github.com/strata-dev/strata/api"
)

// heartbeats tracks node liveness on the leader. Heartbeats are not written
// to raft — only the transitions they cause (down, ready) are — so a cell of
// 100k nodes does not turn its raft log into a heartbeat log. The tracker is
// pure bookkeeping over an injected time; the leader loop drives it.
type heartbeats struct {
	mu        sync.Mutex
	policy    HeartbeatPolicy
	stagger   func() float64 // uniform in [0,1)
	deadlines map[string]time.Time
	// renewed is when each node last renewed its lease (a heartbeat, a
	// registration, or this leader taking over) and for how long: the
	// scheduler's at-most-once arithmetic starts from it.
	renewed map[string]renewal
}

type renewal struct {
	at    time.Time
	lease time.Duration
}

// newHeartbeats tracks deadlines under policy (with its defaults); stagger
// draws the random stagger of each interval, default math/rand/v2.
func newHeartbeats(policy HeartbeatPolicy, stagger func() float64) *heartbeats {
	if stagger == nil {
		stagger = rand.Float64
	}
	return &heartbeats{policy: policy.WithDefaults(), stagger: stagger, deadlines: map[string]time.Time{}, renewed: map[string]renewal{}}
}

// Reset records a heartbeat from node at now: a lease of one TTL. It
// returns the interval the node should heartbeat at and the TTL after which
// it is down (also the lease's length), both scaled to the number of nodes
// tracked.
func (h *heartbeats) Reset(node string, now time.Time) (interval, ttl time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := len(h.deadlines)
	if _, ok := h.deadlines[node]; !ok {
		n++
	}
	interval, ttl = h.policy.Timing(n, h.stagger())
	h.deadlines[node] = now.Add(ttl)
	h.renewed[node] = renewal{at: now, lease: ttl}
	return interval, ttl
}

// Retry makes node due again at the next check (marking it down failed),
// without renewing its lease.
func (h *heartbeats) Retry(node string, now time.Time) {
	h.mu.Lock()
	h.deadlines[node] = now
	h.mu.Unlock()
}

// Len is the number of nodes tracked.
func (h *heartbeats) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.deadlines)
}

// Renewed returns when node last renewed its lease and the lease's length;
// zero when this leader never heard from it.
func (h *heartbeats) Renewed(node string) (time.Time, time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.renewed[node]
	return r.at, r.lease
}

// Forget stops tracking a node (it is down).
func (h *heartbeats) Forget(node string) {
	h.mu.Lock()
	delete(h.deadlines, node)
	delete(h.renewed, node)
	h.mu.Unlock()
}

// Clear forgets every node (leadership lost).
func (h *heartbeats) Clear() {
	h.mu.Lock()
	h.deadlines = map[string]time.Time{}
	h.renewed = map[string]renewal{}
	h.mu.Unlock()
}

// Expired returns the nodes whose deadline passed, sorted, and forgets them.
func (h *heartbeats) Expired(now time.Time) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for id, d := range h.deadlines {
		if now.After(d) {
			out = append(out, id)
			delete(h.deadlines, id)
		}
	}
	sort.Strings(out)
	return out
}

// watchHeartbeats marks nodes down when their TTL expires and asks for their
// workloads to be re-evaluated, so lost allocations get replacements.
func (s *Server) watchHeartbeats(ctx context.Context) {
	tick := time.NewTicker(s.beats.policy.MinTTL / 4)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		for _, id := range s.beats.Expired(s.cfg.Now()) {
			s.metrics.heartbeatsMissed.Inc()
			if err := s.markNodeDown(id, "missed heartbeats for longer than its TTL"); err != nil {
				s.logger.Error("mark node down; will retry", "node", id, "err", err)
				s.beats.Retry(id, s.cfg.Now()) // due again at the next tick
			}
		}
	}
}

func (s *Server) markNodeDown(id, reason string) error {
	snap := s.State().Snapshot()
	n := snap.Node(id)
	if n == nil || n.Status == api.NodeDown {
		return nil
	}
	cmd := &nodeStatusCmd{NodeID: id, Status: api.NodeDown, Reason: reason, Time: s.cfg.Now(),
		Evals: s.evalsForNode(snap.AllocsByNode(id), api.TriggerNodeDown, id)}
	cmd.LastHeartbeat, cmd.Lease = s.beats.Renewed(id)
	if _, err := s.propose(cmdNodeStatus, cmd); err != nil {
		return err
	}
	s.logger.Warn("node down", "node", id, "name", n.Name, "reason", reason, "evals", len(cmd.Evals))
	return nil
}

// evalsForNode makes one pending evaluation per workload with a
// non-terminal allocation among allocs.
func (s *Server) evalsForNode(allocs []*api.Allocation, trigger, nodeID string) []*api.Evaluation {
	seen := map[string]bool{}
	var evals []*api.Evaluation
	for _, a := range allocs {
		if a.Terminal() || seen[a.Workload] {
			continue
		}
		seen[a.Workload] = true
		evals = append(evals, s.newEval(a.Workload, a.Priority, trigger, nodeID))
	}
	return evals
}

func (s *Server) newEval(workload string, priority int, trigger, nodeID string) *api.Evaluation {
	return &api.Evaluation{ID: newID(), Workload: workload, Priority: priority, TriggeredBy: trigger,
		NodeID: nodeID, Status: api.EvalPending, CreateTime: s.cfg.Now()}
}
