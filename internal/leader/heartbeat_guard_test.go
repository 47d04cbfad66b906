package leader

import (
	"fmt"
	"math"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// guardCell drives a heartbeat tracker with a fake clock: nodes heartbeat
// every second unless dead or dropped, the leader checks every
// checkEvery, and every node marked down is recorded with the time.
type guardCell struct {
	t          *testing.T
	h          *heartbeats
	now        time.Time
	nodes      []string
	dead       map[string]bool
	lastBeat   map[string]time.Time
	markedAt   map[string]time.Time
	checkEvery time.Duration
	nextCheck  time.Time
}

func newGuardCell(t *testing.T, nodes int, guard DownGuardPolicy) *guardCell {
	c := &guardCell{t: t, now: time.Unix(10_000, 0), dead: map[string]bool{}, lastBeat: map[string]time.Time{},
		markedAt: map[string]time.Time{}, checkEvery: 2500 * time.Millisecond}
	c.h = newHeartbeats(HeartbeatPolicy{MinTTL: 10 * time.Second, MinInterval: time.Second, MaxPerSecond: -1, Guard: guard},
		func() float64 { return 0 })
	c.nextCheck = c.now.Add(c.checkEvery)
	for i := range nodes {
		id := fmt.Sprintf("n%04d", i)
		c.nodes = append(c.nodes, id)
		c.beat(id)
	}
	return c
}

func (c *guardCell) beat(id string) {
	c.h.Reset(id, c.now)
	c.lastBeat[id] = c.now
}

func (c *guardCell) check() {
	for _, id := range c.h.Expired(c.now) {
		if _, twice := c.markedAt[id]; twice {
			c.t.Fatalf("%s marked down twice", id)
		}
		if silent := c.now.Sub(c.lastBeat[id]); silent <= 10*time.Second {
			c.t.Fatalf("%s marked down %v after its last heartbeat, within its TTL", id, silent)
		}
		c.markedAt[id] = c.now
	}
}

// run advances the clock for d in half-second steps: live nodes heartbeat
// on whole seconds unless drop says the leader did not handle it, and the
// leader checks every checkEvery.
func (c *guardCell) run(d time.Duration, drop func(id string) bool) {
	end := c.now.Add(d)
	for c.now.Before(end) {
		c.now = c.now.Add(500 * time.Millisecond)
		if c.now.UnixMilli()%1000 == 0 {
			for _, id := range c.nodes {
				if _, down := c.markedAt[id]; down || c.dead[id] || (drop != nil && drop(id)) {
					continue
				}
				c.beat(id)
			}
		}
		if !c.now.Before(c.nextCheck) {
			c.check()
			c.nextCheck = c.nextCheck.Add(c.checkEvery)
		}
	}
}

func everyOther(n int) func(string) bool {
	i := 0
	return func(string) bool { i++; return i%n != 0 }
}

func TestDownGuard(t *testing.T) {
	tests := []struct {
		name  string
		nodes int
		guard DownGuardPolicy
		// scenario runs the cell and returns the nodes expected down and
		// the latest time each may be marked (zero: must not be).
		scenario func(c *guardCell) (wantDown []string, by time.Duration)
	}{
		{
			name: "a small cell marks a dead node down at its TTL", nodes: 3,
			scenario: func(c *guardCell) ([]string, time.Duration) {
				c.run(30*time.Second, nil)
				c.dead["n0001"] = true
				c.run(30*time.Second, nil)
				return []string{"n0001"}, 10*time.Second + c.checkEvery
			},
		},
		{
			name: "one dead node of 100 while the others heartbeat is down at its TTL", nodes: 100,
			scenario: func(c *guardCell) ([]string, time.Duration) {
				c.run(30*time.Second, nil)
				c.dead["n0042"] = true
				c.run(30*time.Second, nil)
				return []string{"n0042"}, 10*time.Second + c.checkEvery
			},
		},
		{
			name: "a starved leader handling a tenth of the heartbeats for 25s marks no live node down", nodes: 200,
			scenario: func(c *guardCell) ([]string, time.Duration) {
				c.run(30*time.Second, nil)
				c.run(25*time.Second, everyOther(10))
				c.run(60*time.Second, nil)
				return nil, 0
			},
		},
		{
			name: "without the guard the same starvation marks live nodes down", nodes: 200,
			guard: DownGuardPolicy{MinNodes: -1, MaxDownsPerSecond: -1},
			scenario: func(c *guardCell) ([]string, time.Duration) {
				c.run(30*time.Second, nil)
				c.run(25*time.Second, everyOther(10))
				if len(c.markedAt) == 0 {
					c.t.Fatal("no node down: the scenario does not starve the leader")
				}
				want := make([]string, 0, len(c.markedAt))
				for id := range c.markedAt {
					want = append(want, id)
				}
				return want, 0
			},
		},
		{
			name: "every node of 100 dead at once: deferred, then down within TTL x 3 plus the rate limit", nodes: 100,
			scenario: func(c *guardCell) ([]string, time.Duration) {
				c.run(30*time.Second, nil)
				for _, id := range c.nodes {
					c.dead[id] = true
				}
				c.run(90*time.Second, nil)
				return c.nodes, 30*time.Second + c.checkEvery + 3*time.Second // 100 nodes, burst 50, 20/s
			},
		},
		{
			name: "the rate limit spreads 200 downs at 20/s after a burst of 50", nodes: 200,
			guard: DownGuardPolicy{MinNodes: -1},
			scenario: func(c *guardCell) ([]string, time.Duration) {
				c.run(30*time.Second, nil)
				for _, id := range c.nodes {
					c.dead[id] = true
				}
				c.run(10*time.Second+c.checkEvery, nil)
				if len(c.markedAt) != 50 {
					c.t.Fatalf("%d marked at the first check, want the burst of 50", len(c.markedAt))
				}
				c.run(c.checkEvery, nil)
				if len(c.markedAt) != 100 {
					c.t.Fatalf("%d marked after one more check (2.5s at 20/s), want 100", len(c.markedAt))
				}
				c.run(30*time.Second, nil)
				return c.nodes, 10*time.Second + c.checkEvery + 8*time.Second
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newGuardCell(t, tt.nodes, tt.guard)
			wantDown, by := tt.scenario(c)
			if len(c.markedAt) != len(wantDown) {
				t.Fatalf("%d nodes marked down, want %d", len(c.markedAt), len(wantDown))
			}
			for _, id := range wantDown {
				at, ok := c.markedAt[id]
				if !ok {
					t.Fatalf("%s not marked down", id)
				}
				if by > 0 && at.Sub(c.lastBeat[id]) > by {
					t.Fatalf("%s marked down %v after its last heartbeat, over the bound %v", id, at.Sub(c.lastBeat[id]), by)
				}
			}
		})
	}
}

// A check that comes late (the leader's loop was not scheduled, the
// process was paused) grants the lost time to every deadline; a node that
// then stays silent is down a TTL after the leader looks again.
func TestDownGuardStallCredit(t *testing.T) {
	h := newHeartbeats(HeartbeatPolicy{MinTTL: 10 * time.Second, MaxPerSecond: -1, Guard: DownGuardPolicy{CheckEvery: 2 * time.Second}}, nil)
	t0 := time.Unix(1000, 0)
	h.Reset("a", t0)
	if got := h.Expired(t0.Add(2 * time.Second)); len(got) != 0 {
		t.Fatalf("down early: %v", got)
	}
	// The leader stalls for 30s: a's deadline (t0+10s) fell inside it.
	// Of those 30s only one check period (2s) counts: a has 10s of
	// silence on the leader's running clock at t0+38s.
	if got := h.Expired(t0.Add(32 * time.Second)); len(got) != 0 {
		t.Fatalf("down after the leader's own stall: %v", got)
	}
	for now := t0.Add(34 * time.Second); !now.After(t0.Add(38 * time.Second)); now = now.Add(2 * time.Second) {
		if got := h.Expired(now); len(got) != 0 {
			t.Fatalf("down at %v, within the TTL counted on the leader's running clock", now.Sub(t0))
		}
	}
	if got := h.Expired(t0.Add(40 * time.Second)); len(got) != 1 {
		t.Fatalf("a silent node not down a TTL after the stall: %v", got)
	}
}

// Property: whatever the cell's size, the nodes that die and when, and the
// periods the leader is starved of heartbeats, no node is marked down
// within its TTL of its last handled heartbeat, and a node that stopped
// heartbeating is marked down within TTL × (1 + DeferTTLs) plus a check
// interval plus the rate limit's backlog (drained a check at a time).
func TestDownGuardBoundsProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		nodes := rapid.IntRange(1, 120).Draw(rt, "nodes")
		c := newGuardCell(t, nodes, DownGuardPolicy{})
		dying := rapid.IntRange(0, nodes).Draw(rt, "dying")
		starveFrom := time.Duration(rapid.IntRange(0, 60).Draw(rt, "starve_from_s")) * time.Second
		starveFor := time.Duration(rapid.IntRange(0, 60).Draw(rt, "starve_for_s")) * time.Second
		keep := rapid.IntRange(1, 10).Draw(rt, "keep_one_in")
		dieAt := time.Duration(rapid.IntRange(0, 60).Draw(rt, "die_at_s")) * time.Second
		c.run(dieAt, nil)
		for _, id := range c.nodes[:dying] {
			c.dead[id] = true
		}
		if starveFrom > dieAt {
			c.run(starveFrom-dieAt, nil)
		}
		c.run(starveFor, everyOther(keep))
		c.run(120*time.Second, nil)
		// The backlog beyond the burst drains at the rate, a check at a time.
		perCheck := DefaultGuardMaxDownsPerSecond * c.checkEvery.Seconds()
		backlog := time.Duration(math.Ceil(float64(max(0, nodes-DefaultGuardDownBurst))/perCheck)) * c.checkEvery
		bound := time.Duration(float64(10*time.Second)*(1+DefaultGuardDeferTTLs)) + c.checkEvery + backlog
		for _, id := range c.nodes[:dying] {
			at, ok := c.markedAt[id]
			if !ok {
				rt.Fatalf("dead node %s never marked down", id)
			}
			if silent := at.Sub(c.lastBeat[id]); silent > bound {
				rt.Fatalf("dead node %s marked down %v after its last heartbeat, over the bound %v", id, silent, bound)
			}
		}
	})
}

// An agent heartbeats again an interval after its previous heartbeat was
// answered; when the leader answers fewer heartbeats than the nodes send,
// they queue and every answer comes later. A leader that handles 15 a
// second for 200 nodes heartbeating every second leaves each node silent
// for about 13s, past its 10s TTL, and the heartbeats it handles are
// late: the lateness rule alone (the rate rule off) keeps every node up,
// and without the guard they go down.
func TestDownGuardQueuedHeartbeats(t *testing.T) {
	tests := []struct {
		name     string
		guard    DownGuardPolicy
		wantDown bool
	}{
		{"lateness rule alone", DownGuardPolicy{StarvedFraction: 1e-9, MaxDownsPerSecond: -1}, false},
		{"both rules off", DownGuardPolicy{StarvedFraction: 1e-9, LateLimit: time.Hour, MaxDownsPerSecond: -1}, true},
		{"no guard", DownGuardPolicy{MinNodes: -1, MaxDownsPerSecond: -1}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newGuardCell(t, 200, tt.guard)
			c.run(30*time.Second, nil)
			// Closed loop: a node's next heartbeat is sent an interval
			// after the last was answered; the leader answers 15/s FIFO.
			var queue []string
			sendAt := map[string]time.Time{}
			for _, id := range c.nodes {
				sendAt[id] = c.now.Add(time.Second)
			}
			for end := c.now.Add(40 * time.Second); c.now.Before(end); {
				c.now = c.now.Add(100 * time.Millisecond)
				for _, id := range c.nodes {
					if at, ok := sendAt[id]; ok && !c.now.Before(at) {
						queue = append(queue, id)
						delete(sendAt, id)
					}
				}
				if c.now.UnixMilli()%200 == 0 { // 3 answered every 200ms
					for range min(len(queue), 3) {
						id := queue[0]
						queue = queue[1:]
						if _, down := c.markedAt[id]; !down {
							c.beat(id)
						}
						sendAt[id] = c.now.Add(time.Second)
					}
				}
				if !c.now.Before(c.nextCheck) {
					c.check()
					c.nextCheck = c.nextCheck.Add(c.checkEvery)
				}
			}
			if down := len(c.markedAt) > 0; down != tt.wantDown {
				t.Fatalf("%d nodes marked down; want some: %v", len(c.markedAt), tt.wantDown)
			}
		})
	}
}
