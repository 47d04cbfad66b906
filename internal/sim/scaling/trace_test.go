package scaling

import (
	"context"
	"testing"
	"time"

	"github.com/strata-dev/strata/internal/autopilot/horizontal"
	"github.com/strata-dev/strata/internal/sim/simtest"
	"github.com/strata-dev/strata/internal/sim/trace"
)

// heldOutFrom is where the later days begin: the design runs stop before
// it, the held-out runs score only from it on.
var heldOutFrom = time.Date(2024, 11, 27, 0, 0, 0, 0, time.UTC).Unix()

// TestAgainstHPAOnSharedTrace replays the shared GenAI request trace,
// replicas 0..20, on the design days (before Nov 27: Strata's defaults were
// chosen on them) and on the held-out later days (scored from Nov 27,
// everything before learnt from). It checks what Strata's autoscaler
// achieves: on the design days at most 70 % of the HPA rule's
// under-provisioned minutes at no more replica-hours, on the held-out days
// at most half of them at most 5 % more replica-hours, and a lower p99
// wait on both. It logs the goal (half the minutes at no more
// replica-hours on both), which is not reached on the design days:
// docs/benchmarks.md has the figures, both trade-off curves and why
// (TestBounds: even trained on the very days it is scored on, the
// autoscaler's model of the moment reaches 56 %).
func TestAgainstHPAOnSharedTrace(t *testing.T) {
	reqs, design, lat := sharedTrace(t)
	for _, c := range []struct {
		name string
		reqs []trace.Request
		from int64
		// what Strata must achieve against the baseline
		minutes, hours float64
	}{{"design days", design, 0, 0.70, 1.00}, {"held-out days", reqs, heldOutFrom, 0.50, 1.05}} {
		t.Run(c.name, func(t *testing.T) {
			cfg := horizontal.DefaultConfig()
			cfg.Min, cfg.Max, cfg.ScaleToZero = 0, 20, true
			a, err := horizontal.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			run := func(s Scaler) Row {
				r, err := Replay(context.Background(), Config{Requests: c.reqs, Startup: lat, Seed: 1, Min: 0, Max: 20, ScoreFrom: c.from}, s)
				if err != nil {
					t.Fatal(err)
				}
				return r.Row
			}
			s, b := run(a), run(NewHPA(0, 20))
			minutes, hours := float64(s.UnderProvisionedMinutes)/float64(b.UnderProvisionedMinutes), s.ReplicaHours/b.ReplicaHours
			goal := "met"
			if minutes > 0.5 || hours > 1 {
				goal = "not met"
			}
			t.Logf("strata %d minutes, %.1f replica-hours, wait p99 %.1fs; baseline %d, %.1f, %.1fs: %.0f%% of the minutes at %.0f%% of the replica-hours (the issue's goal, ≤ 50%% at ≤ 100%%: %s)",
				s.UnderProvisionedMinutes, s.ReplicaHours, s.WaitP99, b.UnderProvisionedMinutes, b.ReplicaHours, b.WaitP99, 100*minutes, 100*hours, goal)
			if minutes > c.minutes || hours > c.hours || s.WaitP99 >= b.WaitP99 {
				t.Fatalf("strata %+v against baseline %+v", s, b)
			}
		})
	}
}

// sharedTrace loads the shared GenAI request trace (all of it, and its
// design days: before heldOutFrom) and the start-up latencies.
func sharedTrace(t *testing.T) (all, design []trace.Request, startup []float64) {
	t.Helper()
	all, err := trace.LoadRequests(simtest.GenAI(t, "lora_request_trace.csv.gz"))
	if err != nil {
		t.Fatal(err)
	}
	startup, err = trace.LoadStartupLatencies(simtest.GenAI(t, "basemodel_update_latency_anon.csv.gz"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range all {
		if r.Arrival < heldOutFrom {
			design = append(design, r)
		}
	}
	return all, design, startup
}
