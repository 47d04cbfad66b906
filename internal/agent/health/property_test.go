package health

import (
	"context"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/strata-dev/strata/api"
)

// TestPropertyThresholds: over any sequence of outcomes, a check is
// passing exactly when its last change was a run of successThreshold
// passes, failing after a run of failureThreshold failures, pending
// before either; it is never probed before its initial delay nor more
// often than its interval; a readiness check never asks for a restart,
// and a liveness check asks once per run of failures that reaches the
// threshold.
func TestPropertyThresholds(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		succ := rapid.IntRange(1, 4).Draw(t, "successThreshold")
		fails := rapid.IntRange(1, 4).Draw(t, "failureThreshold")
		purpose := rapid.SampledFrom([]string{api.CheckReadiness, api.CheckLiveness}).Draw(t, "purpose")
		interval := time.Duration(rapid.IntRange(1, 5).Draw(t, "interval")) * time.Second
		delay := time.Duration(rapid.IntRange(0, 3).Draw(t, "delay")) * time.Second
		outcomes := rapid.SliceOfN(rapid.Bool(), 1, 40).Draw(t, "outcomes")

		c := check("c", purpose, interval, delay, succ, fails)
		script := make([]Outcome, len(outcomes))
		for k, ok := range outcomes {
			script[k] = Outcome{OK: ok, Output: map[bool]string{true: "up", false: "down"}[ok]}
		}
		h := newHarness(&testing.T{}, allocWith(map[string][]api.Check{"a": {c}}), map[string][]Outcome{"c": script})
		start := h.clock.Now()
		h.r.TaskStarted("a")

		want, restarts, run, runOK := api.CheckPending, 0, 0, false
		var lastProbe time.Time
		for k, ok := range outcomes {
			// Step one second at a time until the check has run once more.
			for calls := h.prober.calls["c"]; h.prober.calls["c"] == calls; {
				h.clock.advance(time.Second)
				h.r.RunDue(context.Background())
			}
			now := h.clock.Now()
			if k == 0 && now.Sub(start) < delay {
				t.Fatalf("probed %v after start, before the initial delay %v", now.Sub(start), delay)
			}
			if k > 0 && now.Sub(lastProbe) < interval {
				t.Fatalf("probed %v after the previous run, interval %v", now.Sub(lastProbe), interval)
			}
			lastProbe = now
			if ok == runOK {
				run++
			} else {
				run, runOK = 1, ok
			}
			switch {
			case ok && run == succ:
				want = api.CheckPassing
			case !ok && run == fails:
				if want != api.CheckFailing && purpose == api.CheckLiveness {
					restarts++
				}
				want = api.CheckFailing
			}
			got := h.r.Health()
			if got.Checks[0].Status != want {
				t.Fatalf("after outcomes %v: status %s, want %s", outcomes[:k+1], got.Checks[0].Status, want)
			}
			wantHealth := api.HealthHealthy
			switch {
			case want == api.CheckFailing:
				wantHealth = api.HealthUnhealthy
			case want == api.CheckPending && purpose == api.CheckReadiness:
				wantHealth = api.HealthPending
			}
			if got.Status != wantHealth {
				t.Fatalf("after outcomes %v: health %s, want %s", outcomes[:k+1], got.Status, wantHealth)
			}
		}
		if len(h.restarts) != restarts {
			t.Fatalf("restart requests %d, want %d (%v)", len(h.restarts), restarts, h.restarts)
		}
	})
}
