package scaling

import (
	"context"
	"math"
	"os"
	"testing"
	"time"

	"github.com/strata-dev/strata/internal/autopilot/horizontal"
	"github.com/strata-dev/strata/internal/sim/trace"
)

// clairvoyant knows every request to come: it keeps as many replicas as
// will be in flight at the most over the next lead seconds (every request
// served at once), so a replica it starts is ready before it is needed.
// No autoscaler can know this; it bounds what foresight buys.
type clairvoyant struct {
	start    int64
	inFlight []int // per second from start, every request served at once
	lead     int64
}

func newClairvoyant(reqs []trace.Request, lead int64) *clairvoyant {
	c := &clairvoyant{start: reqs[0].Arrival, lead: lead}
	end := int64(0)
	for _, r := range reqs {
		end = max(end, r.Arrival+int64(math.Ceil(r.Exec))+1)
	}
	c.inFlight = make([]int, end-c.start+lead+1)
	for _, r := range reqs {
		for s := r.Arrival; s < r.Arrival+max(1, int64(math.Ceil(r.Exec))); s++ {
			c.inFlight[s-c.start]++
		}
	}
	return c
}

func (c *clairvoyant) Name() string { return "clairvoyant" }

func (c *clairvoyant) Decide(t horizontal.Telemetry) horizontal.Decision {
	n := t.InFlight
	for s := max(t.Now, c.start); s <= t.Now+c.lead && s-c.start < int64(len(c.inFlight)); s++ {
		n = max(n, c.inFlight[s-c.start])
	}
	return horizontal.Decision{Replicas: min(n, 20)}
}

// hoursOf splits a scaler's replica time by what it was for, sync by sync:
// busy, idle while the decision asked for it (the HPA's target headroom),
// idle while only the scale-down window held it (its decision above what
// the utilisation asked for), and the rest (starting, draining).
type hoursOf struct {
	Scaler
	last                          horizontal.Decision
	busy, headroom, window, other float64
}

func (h *hoursOf) Decide(t horizontal.Telemetry) horizontal.Decision {
	idle := t.ReadySeconds - t.BusySeconds
	h.busy += t.BusySeconds
	if h.last.Replicas > h.last.Reactive {
		h.window += idle
	} else {
		h.headroom += idle
	}
	h.other += math.Max(0, float64(h.last.Replicas)*15-t.ReadySeconds)
	h.last = h.Scaler.Decide(t)
	return h.last
}

// TestBounds (STRATA_SIM_BOUNDS=1; docs/benchmarks.md) logs where the
// HPA rule's replica-hours go and two bounds on the design days (before
// Nov 27), replicas 0..20:
//
//   - the clairvoyant autoscaler (above), with a lead of the longest
//     start-up plus a sync: what perfect foresight costs for no wait;
//   - Strata's autoscaler run a second time over the same days after a
//     first pass (shifted two weeks back) with weights that never decay:
//     its rise model then knows the design days' own statistics, which no
//     autoscaler can; it bounds what the moment's state can tell.
func TestBounds(t *testing.T) {
	if os.Getenv("STRATA_SIM_BOUNDS") == "" {
		t.Skip("STRATA_SIM_BOUNDS=1 to run")
	}
	_, design, lat := sharedTrace(t)
	cfg := Config{Requests: design, Startup: lat, Seed: 1, Min: 0, Max: 20}
	longest := 0.0
	for _, s := range lat {
		longest = math.Max(longest, s)
	}
	spend := &hoursOf{Scaler: NewHPA(0, 20)}
	for _, s := range []Scaler{spend, newClairvoyant(design, int64(longest)+15)} {
		r, err := Replay(context.Background(), cfg, s)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%-12s %4d minutes %6.1f replica-hours", s.Name(), r.Row.UnderProvisionedMinutes, r.Row.ReplicaHours)
	}
	t.Logf("the HPA's replica-hours: busy %.1f, idle under the target's headroom %.1f, idle held by the scale-down window %.1f, starting or draining %.1f",
		spend.busy/3600, spend.headroom/3600, spend.window/3600, spend.other/3600)
	const twoWeeks = 14 * 86400
	earlier := make([]trace.Request, len(design))
	for k, r := range design {
		r.Arrival -= twoWeeks
		earlier[k] = r
	}
	for _, risk := range []float64{0.12, 0.1, 0.08, 0.06, 0.05, 0.04, 0.03} {
		hc := horizontal.DefaultConfig()
		hc.Min, hc.Max, hc.ScaleToZero, hc.Risk, hc.LearnHalfLife = 0, 20, true, risk, 1e6*time.Hour
		a, err := horizontal.New(hc)
		if err != nil {
			t.Fatal(err)
		}
		first := cfg
		first.Requests = earlier
		if _, err := Replay(context.Background(), first, a); err != nil {
			t.Fatal(err)
		}
		r, err := Replay(context.Background(), cfg, a)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("in-sample risk %.2f: %4d minutes %6.1f replica-hours", risk, r.Row.UnderProvisionedMinutes, r.Row.ReplicaHours)
	}
}
