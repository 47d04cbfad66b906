package scaling

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/strata-dev/strata/internal/autopilot/horizontal"
	"github.com/strata-dev/strata/internal/sim/trace"
)

// fixed always asks for the same count, or for counts[k] at decision k.
type fixed struct {
	counts []int
	k      int
	seen   []horizontal.Telemetry
}

func (f *fixed) Name() string { return "fixed" }
func (f *fixed) Decide(t horizontal.Telemetry) horizontal.Decision {
	f.seen = append(f.seen, t)
	n := f.counts[min(f.k, len(f.counts)-1)]
	f.k++
	return horizontal.Decision{Replicas: n, Source: horizontal.SourceReactive}
}

func reqs(pairs ...float64) []trace.Request {
	var out []trace.Request
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, trace.Request{Arrival: int64(pairs[i]), Exec: pairs[i+1], Sequence: i / 2})
	}
	return out
}

func TestReplayWaitsMinutesAndReplicaHours(t *testing.T) {
	cases := []struct {
		name        string
		requests    []trace.Request
		counts      []int
		startup     float64
		min, max    int
		wantMinutes int
		wantP99     float64
		wantHours   float64
	}{
		{"one replica, two overlapping requests: the second waits 20 s",
			reqs(0, 30, 10, 30), []int{1}, 5, 1, 1, 1, 20, 60.0 / 3600},
		{"a second replica started at once is ready before the second request",
			reqs(0, 30, 10, 30), []int{2}, 5, 1, 2, 0, 0, 120.0 / 3600}, // the starting replica counts
		{"a wait that spans a minute boundary marks both minutes",
			reqs(50, 30, 55, 30), []int{1}, 5, 1, 1, 2, 25, 60.0 / 3600},
		{"from zero: the request waits for the start-up",
			reqs(1, 10), []int{0, 1}, 20, 0, 1, 1, 34, 36.0 / 3600}, // asked for at 15, ready at 35, the replay ends at 51
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := Config{Requests: c.requests, Startup: []float64{c.startup}, Sync: 15, Min: c.min, Max: c.max, Tail: 50}
			r, err := Replay(context.Background(), cfg, &fixed{counts: c.counts})
			if err != nil {
				t.Fatal(err)
			}
			// Every trace here starts cold: its first waited minute follows
			// five without an arrival; the next ones do not.
			if c.wantMinutes > 0 && r.Row.UnderProvisionedAfterIdle != 1 {
				t.Fatalf("%d minutes after idle, want 1", r.Row.UnderProvisionedAfterIdle)
			}
			if r.Row.UnderProvisionedMinutes != c.wantMinutes || math.Abs(r.Row.WaitP99-c.wantP99) > 1e-9 || math.Abs(r.Row.ReplicaHours-c.wantHours) > 1e-9 {
				t.Fatalf("row %+v, want %d minutes, p99 %v s, %.5f replica-hours", r.Row, c.wantMinutes, c.wantP99, c.wantHours)
			}
		})
	}
}

func TestScaleInDrainsBusyReplicas(t *testing.T) {
	// Two requests of 40 s on two replicas; the scaler asks for zero at
	// the second decision: both finish, nothing waits, nothing is lost.
	f := &fixed{counts: []int{2, 2, 0}}
	r, err := Replay(context.Background(), Config{Requests: reqs(0, 40, 1, 40), Startup: []float64{1}, Min: 0, Max: 2, Tail: 60}, f)
	if err != nil {
		t.Fatal(err)
	}
	if r.Row.Requests != 2 || r.Row.WaitMax > 1 {
		t.Fatalf("row %+v: both requests must be served at once", r.Row)
	}
	last := f.seen[len(f.seen)-1]
	if last.InFlight != 0 || last.Ready != 0 {
		t.Fatalf("after draining: %+v, want nothing left", last)
	}
}

func TestTelemetryIsThePastOnly(t *testing.T) {
	f := &fixed{counts: []int{1}}
	if _, err := Replay(context.Background(), Config{Requests: reqs(0, 10, 20, 10, 21, 10), Startup: []float64{1}, Min: 1, Max: 1, Tail: 30}, f); err != nil {
		t.Fatal(err)
	}
	// Decisions at 0, 15, 30: the one at 0 comes before the arrival at 0
	// (simultaneous arrivals come last); the one at 15 has seen it; the
	// one at 30 the two at 20 and 21 (one waiting then).
	if f.seen[0].Arrivals != 0 || f.seen[1].Arrivals != 1 || f.seen[2].Arrivals != 2 || f.seen[2].PeakInFlight != 2 {
		t.Fatalf("telemetry %+v", f.seen[:3])
	}
}

func TestReplayRefusesOutOfBounds(t *testing.T) {
	_, err := Replay(context.Background(), Config{Requests: reqs(0, 1), Startup: []float64{1}, Min: 1, Max: 3}, &fixed{counts: []int{4}})
	if !errors.Is(err, ErrOutOfBounds) {
		t.Fatalf("got %v, want ErrOutOfBounds", err)
	}
}

func TestHPARule(t *testing.T) {
	cases := []struct {
		name string
		tel  horizontal.Telemetry
		want int
	}{
		{"all busy: ⌈busy / 0.7⌉", horizontal.Telemetry{Now: 0, Ready: 2, BusySeconds: 30, ReadySeconds: 30}, 3},
		{"within the tolerance: hold", horizontal.Telemetry{Now: 0, Ready: 4, BusySeconds: 0.72 * 60, ReadySeconds: 60}, 4},
		{"scale-up at most doubles or adds four", horizontal.Telemetry{Now: 0, Ready: 1, Starting: 0, BusySeconds: 15, ReadySeconds: 15}, 2},
		{"zero replicas, work waiting: activate one", horizontal.Telemetry{Now: 0, InFlight: 3, Waiting: 3}, 1},
		{"only starting replicas: hold", horizontal.Telemetry{Now: 0, Starting: 2}, 2},
		// Replicas still starting have no metric: the tolerance is the
		// ready replicas' (0.66 / 0.7 is within 10 %), as the HPA's
		// replica calculator does, not one diluted by the starting ones.
		{"ready replicas within the tolerance, two starting: hold", horizontal.Telemetry{Now: 0, Ready: 4, Starting: 2, BusySeconds: 0.66 * 60, ReadySeconds: 60}, 6},
		// On a scale-up the starting replicas count as idle; when that
		// turns the scale-up into a scale-down the HPA holds.
		{"starting replicas turn a scale-up into a scale-down: hold", horizontal.Telemetry{Now: 0, Ready: 2, Starting: 3, BusySeconds: 30, ReadySeconds: 30}, 5},
		{"starting replicas, still short: ⌈busy / 0.7⌉", horizontal.Telemetry{Now: 0, Ready: 4, Starting: 1, BusySeconds: 60, ReadySeconds: 60}, 6},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if d := NewHPA(0, 20).Decide(c.tel); d.Replicas != c.want {
				t.Fatalf("got %d (%s), want %d", d.Replicas, d.Reason, c.want)
			}
		})
	}
	// The scale-down window keeps the highest recommendation of 300 s.
	h := NewHPA(0, 20)
	h.Decide(horizontal.Telemetry{Now: 0, Ready: 4, BusySeconds: 60, ReadySeconds: 60})
	if d := h.Decide(horizontal.Telemetry{Now: 200, Ready: 6, BusySeconds: 0, ReadySeconds: 90}); d.Replicas != 6 {
		t.Fatalf("within the window: %d, want 6 held", d.Replicas)
	}
	if d := h.Decide(horizontal.Telemetry{Now: 400, Ready: 6, BusySeconds: 0, ReadySeconds: 90}); d.Replicas != 0 {
		t.Fatalf("after the window: %d, want 0", d.Replicas)
	}
	// A sync with no ready replica to measure computes nothing, so it
	// leaves no recommendation in the window (the HPA's metrics error).
	h = NewHPA(0, 20)
	h.Decide(horizontal.Telemetry{Now: 0, Ready: 4, BusySeconds: 60, ReadySeconds: 60})
	if d := h.Decide(horizontal.Telemetry{Now: 100, Starting: 6}); d.Replicas != 6 {
		t.Fatalf("nothing ready: %d, want 6 held", d.Replicas)
	}
	if d := h.Decide(horizontal.Telemetry{Now: 350, Ready: 6, BusySeconds: 0, ReadySeconds: 90}); d.Replicas != 0 {
		t.Fatalf("the hold at 100 was no recommendation: %d, want 0", d.Replicas)
	}
}
