package leader

import (
	"math"
	"time"
)

// The down guard keeps a starved leader from marking live nodes down (docs/
// heartbeats.md). A node is marked down when the leader has not *handled*
// a heartbeat from it for a TTL; when the leader itself is what fell
// behind — its CPU taken by placement traffic, its heartbeat requests
// queued behind watches and raft writes — every node looks silent at once,
// and marking them down replaces their allocations, which adds the very
// load that starved the leader. Production orchestrators treat mass
// simultaneous failure as the control plane's fault (Kubernetes' node
// lifecycle controller stops evicting in "full disruption" and rate-limits
// evictions); the guard does the same with three rules, all pure functions
// of an injected clock:
//
//  1. Stall credit. The leader checks deadlines every CheckEvery; when a
//     check comes late (its goroutine was not scheduled, the process was
//     paused), the time it lost is added to every deadline: time the
//     leader was not looking does not count against the nodes.
//  2. Starvation deferral. The leader knows when each node's next
//     heartbeat is due and so the rate it should see (the sum of
//     1/interval over the nodes it tracks: it told each its interval).
//     Over the last Window it measures how late the heartbeats it handled
//     were, and how many it handled. When their mean lateness exceeds
//     LateLimit (heartbeats queue behind other work: the age of what waits
//     to be handled), or it handled fewer than StarvedFraction of those
//     expected (they do not even arrive), it is starved — and stays so
//     until a whole Window passes without either — and an overdue node is
//     not marked down until it has been overdue for DeferTTLs of its own
//     TTLs. A dead node sends nothing: it is never late, so a few dead
//     nodes do not make the leader think itself starved; only many falling
//     silent at once do (Kubernetes' "full disruption"), and then only for
//     the bounded deferral.
//  3. Rate limit. At most MaxDownsPerSecond nodes are marked down per
//     second (burst DownBurst), most overdue first; the others stay
//     tracked and a heartbeat handled meanwhile still saves them.
//
// Bound: a node that stops heartbeating is marked down at most
// TTL × (1 + DeferTTLs) after its last handled heartbeat, plus one check
// interval, plus the rate limit's backlog of nodes more overdue than it
// (ceil((backlog − DownBurst) / (MaxDownsPerSecond × CheckEvery)) check
// intervals), all counted in time the leader's check
// loop ran on schedule (stall credit excluded). Without starvation the
// deferral is 0 and the bound is the TTL, as before.
//
// At-most-once safety is unaffected: the server replaces an at-most-once
// copy only after the lease of the node's last renewal surely expired
// (reschedule), and the guard changes neither that renewal nor the lease;
// marking a node down later only replaces its copies later.

// Defaults of DownGuardPolicy.
const (
	DefaultGuardMinNodes          = 50
	DefaultGuardStarvedFraction   = 0.5
	DefaultGuardDeferTTLs         = 2.0
	DefaultGuardMaxDownsPerSecond = 20.0
	DefaultGuardDownBurst         = 50
)

// DownGuardPolicy configures the down guard. Zero fields take the
// defaults; a negative MinNodes turns starvation deferral off, a negative
// MaxDownsPerSecond turns the rate limit off, a zero CheckEvery turns the
// stall credit off (the leader's loop sets it).
type DownGuardPolicy struct {
	// MinNodes: the rate of a cell smaller than this says too little to
	// judge starvation (Kubernetes' large-cluster threshold is also 50).
	MinNodes int
	// StarvedFraction: starved when the heartbeats handled over Window are
	// fewer than this fraction of those expected.
	StarvedFraction float64
	// LateLimit: starved when the heartbeats handled over Window were late
	// by more than this on average; default a quarter of the policy's
	// MinTTL.
	LateLimit time.Duration
	// Window is how far back the handled heartbeats are counted; default
	// half the policy's MinTTL, so that a starvation that lasts a TTL
	// fills the window by the time the first deadline falls in it.
	Window time.Duration
	// DeferTTLs is how long, in the node's own TTLs, a starved leader
	// waits past a node's deadline before it marks the node down anyway.
	DeferTTLs float64
	// MaxDownsPerSecond and DownBurst rate-limit marking nodes down.
	MaxDownsPerSecond float64
	DownBurst         int
	// CheckEvery is the period of the leader's deadline checks; a check
	// later than twice this grants the lost time to every deadline.
	CheckEvery time.Duration
}

// WithDefaults fills the zero fields.
func (p DownGuardPolicy) WithDefaults() DownGuardPolicy {
	if p.MinNodes == 0 {
		p.MinNodes = DefaultGuardMinNodes
	}
	if p.StarvedFraction <= 0 {
		p.StarvedFraction = DefaultGuardStarvedFraction
	}
	if p.DeferTTLs <= 0 {
		p.DeferTTLs = DefaultGuardDeferTTLs
	}
	if p.MaxDownsPerSecond == 0 {
		p.MaxDownsPerSecond = DefaultGuardMaxDownsPerSecond
	}
	if p.DownBurst <= 0 {
		p.DownBurst = DefaultGuardDownBurst
	}
	return p
}

// downGuard is the guard's state: not safe for concurrent use (the
// heartbeat tracker holds it under its lock).
type downGuard struct {
	policy DownGuardPolicy
	// expectedPerSecond is Σ 1/interval over the tracked nodes.
	expectedPerSecond float64
	// handled counts heartbeats per whole second, a ring over Window;
	// head is the second of the newest bucket.
	handled []int64
	late    []float64 // seconds of lateness, summed per second
	head    int64
	// since is when this guard started counting (a new leadership): no
	// starvation is judged before a whole window was seen.
	since     time.Time
	lastCheck time.Time
	tokens    float64
	refilled  time.Time
	// starved is the verdict of the last check (for metrics and logs);
	// starvedAt the last check that saw starvation.
	starved   bool
	starvedAt time.Time
}

func newDownGuard(p DownGuardPolicy) *downGuard {
	p = p.WithDefaults()
	if p.Window <= 0 {
		p.Window = DefaultHeartbeatTTL / 2
	}
	if p.LateLimit <= 0 {
		p.LateLimit = DefaultHeartbeatTTL / 4
	}
	seconds := int(math.Ceil(p.Window.Seconds())) + 1 // the current, partial second too
	return &downGuard{policy: p, handled: make([]int64, seconds), late: make([]float64, seconds), tokens: float64(p.DownBurst)}
}

// reset forgets everything (leadership lost or gained).
func (g *downGuard) reset() {
	*g = *newDownGuard(g.policy)
}

// heartbeat records a heartbeat handled at now, late by late, from a node
// told interval, replacing its previous interval (zero for a node not
// tracked before).
func (g *downGuard) heartbeat(now time.Time, late, previous, interval time.Duration) {
	g.untrack(previous)
	if interval > 0 {
		g.expectedPerSecond += 1 / interval.Seconds()
	}
	if g.since.IsZero() {
		g.since = now
	}
	g.advance(now)
	g.handled[g.slot(now.Unix())]++
	g.late[g.slot(now.Unix())] += max(late, 0).Seconds()
}

// untrack removes a node told interval from the expected rate.
func (g *downGuard) untrack(interval time.Duration) {
	if interval > 0 {
		g.expectedPerSecond = math.Max(0, g.expectedPerSecond-1/interval.Seconds())
	}
}

func (g *downGuard) slot(sec int64) int {
	n := int64(len(g.handled))
	return int(((sec % n) + n) % n)
}

// advance moves the ring to now's second, zeroing the seconds skipped.
func (g *downGuard) advance(now time.Time) {
	sec := now.Unix()
	if g.head == 0 || sec-g.head >= int64(len(g.handled)) {
		clear(g.handled)
		clear(g.late)
		g.head = sec
		return
	}
	for g.head < sec {
		g.head++
		g.handled[g.slot(g.head)] = 0
		g.late[g.slot(g.head)] = 0
	}
}

// stallCredit returns the time the check at now came late by (0 when on
// time, or when stall credit is off) and records the check.
func (g *downGuard) stallCredit(now time.Time) time.Duration {
	every := g.policy.CheckEvery
	last := g.lastCheck
	g.lastCheck = now
	if every <= 0 || last.IsZero() {
		return 0
	}
	if gap := now.Sub(last); gap > 2*every {
		return gap - every
	}
	return 0
}

// handledRate returns the heartbeats handled per second over the whole
// seconds of the window before now, the rate expected, and the mean
// lateness of those handled.
func (g *downGuard) handledRate(now time.Time) (handled, expected float64, late time.Duration) {
	g.advance(now)
	var count int64
	var lateSum float64
	for i, c := range g.handled {
		if i != g.slot(g.head) { // the current second is partial
			count += c
			lateSum += g.late[i]
		}
	}
	if count > 0 {
		late = time.Duration(lateSum / float64(count) * float64(time.Second))
	}
	return float64(count) / float64(len(g.handled)-1), g.expectedPerSecond, late
}

// judge decides whether the leader is starved at now, tracking nodes.
func (g *downGuard) judge(now time.Time, nodes int) bool {
	g.starved = false
	if g.policy.MinNodes < 0 || nodes < g.policy.MinNodes || g.since.IsZero() ||
		now.Sub(g.since) < g.policy.Window+time.Second {
		return false
	}
	handled, expected, late := g.handledRate(now)
	if late > g.policy.LateLimit || handled < g.policy.StarvedFraction*expected {
		g.starvedAt = now
	}
	g.starved = !g.starvedAt.IsZero() && now.Sub(g.starvedAt) < g.policy.Window
	return g.starved
}

// deferral is how long past its deadline a node of TTL ttl may stay
// tracked while the leader is starved.
func (g *downGuard) deferral(ttl time.Duration) time.Duration {
	return time.Duration(g.policy.DeferTTLs * float64(ttl))
}

// take returns how many of want nodes may be marked down at now.
func (g *downGuard) take(now time.Time, want int) int {
	rate := g.policy.MaxDownsPerSecond
	if rate < 0 || want == 0 {
		return want
	}
	if !g.refilled.IsZero() && now.After(g.refilled) {
		g.tokens = math.Min(float64(g.policy.DownBurst), g.tokens+now.Sub(g.refilled).Seconds()*rate)
	}
	if g.refilled.IsZero() || now.After(g.refilled) {
		g.refilled = now
	}
	n := min(want, int(g.tokens))
	g.tokens -= float64(n)
	return n
}
