package leader

import (
	"math"
	"time"
)

// How heartbeats stay bounded as a cell grows (after Nomad's
// max_heartbeats_per_second): every node is told how often to heartbeat, and
// that interval grows with the number of nodes so that the cell as a whole
// sends at most MaxPerSecond heartbeats. The leader waits a node's TTL —
// heartbeatsPerTTL intervals, and never less than MinTTL — before it marks the
// node down, so one or two late or lost heartbeats are not a node down.
//
//	interval = MinInterval                                        while nodes/MaxPerSecond ≤ MinInterval
//	         = nodes/MaxPerSecond × (1 + staggerFraction × stagger)   above it
//	ttl      = max(MinTTL, heartbeatsPerTTL × interval)
//
// The stagger (a uniform random number in [0,1) drawn by the caller) only
// ever lengthens a scaled interval, so it spreads the nodes' heartbeats over
// time without raising the rate above the bound; a small cell is not
// staggered and keeps its short interval.

// heartbeatsPerTTL is how many intervals a node may stay silent before it is
// down: it may lose two heartbeats in a row and still be up.
const heartbeatsPerTTL = 3

// staggerFraction is the most the stagger lengthens an interval.
const staggerFraction = 0.25

// Defaults of HeartbeatPolicy.
const (
	DefaultHeartbeatTTL           = 10 * time.Second
	DefaultHeartbeatInterval      = time.Second
	DefaultMaxHeartbeatsPerSecond = 500
)

// HeartbeatPolicy says how often nodes heartbeat and how long the leader
// waits for them. Zero fields take the defaults.
type HeartbeatPolicy struct {
	// MinTTL is the shortest silence after which a node is marked down.
	MinTTL time.Duration
	// MinInterval is how often nodes heartbeat while the cell is small.
	MinInterval time.Duration
	// MaxPerSecond bounds the heartbeats the cell sends per second; the
	// interval grows with the node count to keep under it. Negative: no
	// bound (every node heartbeats every MinInterval).
	MaxPerSecond float64
	// Guard keeps a starved leader from marking live nodes down
	// (heartbeat_guard.go); zero fields take its defaults.
	Guard DownGuardPolicy
}

// WithDefaults fills the zero fields.
func (p HeartbeatPolicy) WithDefaults() HeartbeatPolicy {
	if p.MinTTL <= 0 {
		p.MinTTL = DefaultHeartbeatTTL
	}
	if p.MinInterval <= 0 {
		p.MinInterval = DefaultHeartbeatInterval
	}
	if p.MaxPerSecond == 0 {
		p.MaxPerSecond = DefaultMaxHeartbeatsPerSecond
	}
	return p
}

// Timing returns the interval a node of a cell of nodes nodes should
// heartbeat at and the TTL the leader gives it. stagger is in [0,1). It is a
// pure function of its inputs; p must have its defaults.
func (p HeartbeatPolicy) Timing(nodes int, stagger float64) (interval, ttl time.Duration) {
	interval = p.MinInterval
	if p.MaxPerSecond > 0 {
		scaled := float64(nodes) / p.MaxPerSecond * float64(time.Second)
		if scaled > float64(interval) {
			interval = time.Duration(math.Ceil(math.Min(scaled, float64(maxHeartbeatInterval))))
			stagger = math.Min(math.Max(stagger, 0), 1)
			interval += time.Duration(float64(interval) * staggerFraction * stagger)
		}
	}
	ttl = max(p.MinTTL, heartbeatsPerTTL*interval)
	return interval, ttl
}

// maxHeartbeatInterval keeps an absurd rate setting from telling nodes to
// heartbeat once a year.
const maxHeartbeatInterval = time.Hour
