package leader

import (
	"math/rand/v2"
	"sort"
	"sync"
	"time"
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
	// guard keeps a starved leader from marking live nodes down
	// (heartbeat_guard.go).
	guard *downGuard
	// deferred counts the checks at which a node was overdue but kept
	// (starvation deferral or the rate limit).
	deferred int64
}

type renewal struct {
	at       time.Time
	lease    time.Duration
	interval time.Duration
}

// newHeartbeats tracks deadlines under policy (with its defaults); stagger
// draws the random stagger of each interval, default math/rand/v2.
func newHeartbeats(policy HeartbeatPolicy, stagger func() float64) *heartbeats {
	if stagger == nil {
		stagger = rand.Float64
	}
	policy = policy.WithDefaults()
	if policy.Guard.Window <= 0 {
		policy.Guard.Window = policy.MinTTL / 2
	}
	if policy.Guard.LateLimit <= 0 {
		policy.Guard.LateLimit = policy.MinTTL / 4
	}
	return &heartbeats{policy: policy, stagger: stagger, deadlines: map[string]time.Time{}, renewed: map[string]renewal{},
		guard: newDownGuard(policy.Guard)}
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
	var previous, late time.Duration
	if _, tracked := h.deadlines[node]; tracked {
		r := h.renewed[node]
		previous, late = r.interval, now.Sub(r.at.Add(r.interval))
	}
	h.guard.heartbeat(now, late, previous, interval)
	h.deadlines[node] = now.Add(ttl)
	h.renewed[node] = renewal{at: now, lease: ttl, interval: interval}
	return interval, ttl
}

// Retry makes node due again at the next check (marking it down failed),
// without renewing its lease.
func (h *heartbeats) Retry(node string, now time.Time) {
	h.mu.Lock()
	if _, tracked := h.deadlines[node]; !tracked {
		h.expect(node)
	}
	h.deadlines[node] = now
	h.mu.Unlock()
}

// expect counts a node back into the expected heartbeat rate.
func (h *heartbeats) expect(node string) {
	if r, ok := h.renewed[node]; ok && r.interval > 0 {
		h.guard.expectedPerSecond += 1 / r.interval.Seconds()
	}
}

// CheckEvery tells the guard the period of the leader's deadline checks,
// which turns its stall credit on.
func (h *heartbeats) CheckEvery(period time.Duration) {
	h.mu.Lock()
	h.guard.policy.CheckEvery = period
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
	if _, tracked := h.deadlines[node]; tracked {
		h.guard.untrack(h.renewed[node].interval)
	}
	delete(h.deadlines, node)
	delete(h.renewed, node)
	h.mu.Unlock()
}

// Clear forgets every node (leadership lost).
func (h *heartbeats) Clear() {
	h.mu.Lock()
	h.deadlines = map[string]time.Time{}
	h.renewed = map[string]renewal{}
	h.guard.reset()
	h.mu.Unlock()
}

// Expired returns the nodes to mark down at now, most overdue first, and
// stops tracking them: those whose deadline passed, less those the down
// guard keeps (a starved leader's deferral, the rate limit).
func (h *heartbeats) Expired(now time.Time) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if credit := h.guard.stallCredit(now); credit > 0 {
		for id, d := range h.deadlines {
			h.deadlines[id] = d.Add(credit)
		}
	}
	starved := h.guard.judge(now, len(h.deadlines))
	type overdue struct {
		id       string
		deadline time.Time
	}
	var due []overdue
	for id, d := range h.deadlines {
		if !now.After(d) {
			continue
		}
		if starved && now.Sub(d) < h.guard.deferral(h.renewed[id].lease) {
			h.deferred++
			continue
		}
		due = append(due, overdue{id, d})
	}
	sort.Slice(due, func(i, j int) bool {
		if !due[i].deadline.Equal(due[j].deadline) {
			return due[i].deadline.Before(due[j].deadline)
		}
		return due[i].id < due[j].id
	})
	n := h.guard.take(now, len(due))
	h.deferred += int64(len(due) - n)
	out := make([]string, 0, n)
	for _, d := range due[:n] {
		out = append(out, d.id)
		delete(h.deadlines, d.id)
		h.guard.untrack(h.renewed[d.id].interval)
	}
	return out
}

// guardState is what the down guard saw (metrics, logs).
type guardState struct {
	starved           bool
	handledPerSecond  float64
	expectedPerSecond float64
	meanLate          time.Duration
	kept              int64
}

// GuardState returns whether the last check judged the leader starved,
// the heartbeats handled per second over the guard's window, those
// expected, their mean lateness, and how many times an overdue node was
// kept.
func (h *heartbeats) GuardState(now time.Time) guardState {
	h.mu.Lock()
	defer h.mu.Unlock()
	handled, expected, late := h.guard.handledRate(now)
	return guardState{h.guard.starved, handled, expected, late, h.deferred}
}
