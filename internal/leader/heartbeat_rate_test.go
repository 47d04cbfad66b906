package leader

import (
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"
)

func TestHeartbeatTiming(t *testing.T) {
	def := HeartbeatPolicy{}.WithDefaults()
	cases := []struct {
		name         string
		policy       HeartbeatPolicy
		nodes        int
		stagger      float64
		wantInterval time.Duration
		wantTTL      time.Duration
	}{
		{"empty cell", def, 0, 0, time.Second, 10 * time.Second},
		{"small cell keeps the minimum interval and TTL", def, 500, 0.9, time.Second, 10 * time.Second},
		{"at the rate bound", def, 500, 0, time.Second, 10 * time.Second},
		{"10k nodes: 20s, TTL 60s", def, 10_000, 0, 20 * time.Second, time.Minute},
		{"10k nodes staggered by half", def, 10_000, 0.5, 22500 * time.Millisecond, 67500 * time.Millisecond},
		{"100k nodes: 200s, TTL 600s", def, 100_000, 0, 200 * time.Second, 10 * time.Minute},
		{"custom rate", HeartbeatPolicy{MaxPerSecond: 50}.WithDefaults(), 5000, 0, 100 * time.Second, 300 * time.Second},
		{"longer minimum TTL wins", HeartbeatPolicy{MinTTL: 2 * time.Minute}.WithDefaults(), 10_000, 0, 20 * time.Second, 2 * time.Minute},
		{"no bound", HeartbeatPolicy{MaxPerSecond: -1}.WithDefaults(), 100_000, 0.7, time.Second, 10 * time.Second},
		{"interval capped", HeartbeatPolicy{MaxPerSecond: 0.001}.WithDefaults(), 100_000, 0, time.Hour, 3 * time.Hour},
		{"stagger out of range is clamped", def, 10_000, 7, 25 * time.Second, 75 * time.Second},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			interval, ttl := c.policy.Timing(c.nodes, c.stagger)
			if interval != c.wantInterval || ttl != c.wantTTL {
				t.Fatalf("Timing(%d, %v) = %v, %v; want %v, %v", c.nodes, c.stagger, interval, ttl, c.wantInterval, c.wantTTL)
			}
		})
	}
}

// The cell's heartbeat rate stays under the bound however large it grows,
// and a node always has at least two spare intervals before it is down.
func TestHeartbeatTimingBoundsTheRate(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := HeartbeatPolicy{
			MinTTL:       time.Duration(rapid.Int64Range(1, int64(time.Minute)).Draw(t, "minTTL")),
			MinInterval:  time.Duration(rapid.Int64Range(1, int64(10*time.Second)).Draw(t, "minInterval")),
			MaxPerSecond: float64(rapid.IntRange(1, 100_000).Draw(t, "maxPerSecond")),
		}
		nodes := rapid.IntRange(0, 1_000_000).Draw(t, "nodes")
		interval, ttl := p.Timing(nodes, rapid.Float64Range(0, 1).Draw(t, "stagger"))
		if interval < p.MinInterval {
			t.Fatalf("interval %v below the minimum %v", interval, p.MinInterval)
		}
		if rate := float64(nodes) / interval.Seconds(); interval < maxHeartbeatInterval && rate > p.MaxPerSecond*1.000001 {
			t.Fatalf("%d nodes every %v is %.1f/s, above the bound %v/s", nodes, interval, rate, p.MaxPerSecond)
		}
		if ttl < heartbeatsPerTTL*interval || ttl < p.MinTTL {
			t.Fatalf("ttl %v shorter than %d intervals of %v or the minimum %v", ttl, heartbeatsPerTTL, interval, p.MinTTL)
		}
	})
}

// The tracker scales each node's timing with the nodes it tracks, and a
// node's deadline is its own TTL.
func TestHeartbeatsScaleWithTheCell(t *testing.T) {
	// The down guard off: all 100 falling silent at once is what it defers.
	h := newHeartbeats(HeartbeatPolicy{MinTTL: 10 * time.Second, MinInterval: time.Second, MaxPerSecond: 10,
		Guard: DownGuardPolicy{MinNodes: -1, MaxDownsPerSecond: -1}}, func() float64 { return 0 })
	t0 := time.Unix(1000, 0)
	for i := range 100 {
		h.Reset(fmt.Sprintf("n%03d", i), t0.Add(-time.Second))
	}
	// The first nodes got short TTLs while the cell was small; their next
	// heartbeat gets the cell's.
	var interval, ttl time.Duration
	for i := range 100 {
		interval, ttl = h.Reset(fmt.Sprintf("n%03d", i), t0)
	}
	if interval != 10*time.Second || ttl != 30*time.Second {
		t.Fatalf("100 nodes at 10/s: interval %v, ttl %v; want 10s, 30s", interval, ttl)
	}
	if got := h.Expired(t0.Add(29 * time.Second)); len(got) != 0 {
		t.Fatalf("nodes expired before their scaled TTL: %d of them", len(got))
	}
	if got := h.Expired(t0.Add(31 * time.Second)); len(got) != 100 {
		t.Fatalf("%d nodes expired after the TTL, want 100", len(got))
	}
	if h.Len() != 0 {
		t.Fatalf("expired nodes still tracked: %d", h.Len())
	}
}
