package sizing

import (
	"context"
	"math"
	"testing"

	"github.com/strata-dev/strata/internal/autopilot/vertical"
	"github.com/strata-dev/strata/internal/sim/trace"
)

// series builds a pod's samples one a minute.
func series(pod string, values ...float64) trace.UsageSeries {
	s := trace.UsageSeries{Pod: pod}
	for i, v := range values {
		s.Samples = append(s.Samples, trace.UsageSample{Time: int64(60 * i), Value: v})
	}
	return s
}

func constant(v float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// fixedSizer keeps one limit and records what it was told.
type fixedSizer struct {
	limit float64
	seen  []vertical.Sample
}

func (f *fixedSizer) Limit(int64) (float64, bool)     { return f.limit, true }
func (f *fixedSizer) Observe(s vertical.Sample) error { f.seen = append(f.seen, s); return nil }

type fixedPolicy struct{ sizer *fixedSizer }

func (p fixedPolicy) Name() string             { return "fixed" }
func (p fixedPolicy) NewSizer() (Sizer, error) { return p.sizer, nil }

func TestReplayScoresOnlyAfterWarmupAndReportsBreaches(t *testing.T) {
	values := constant(0.5, 120)
	values[10] = 0.9  // in the warm-up quarter (30 samples): not scored
	values[100] = 0.9 // scored: a breach
	values[101] = 0.8 // scored: a breach
	s := &fixedSizer{limit: 0.6}
	res, err := Replay(context.Background(), fixedPolicy{s}, []trace.UsageSeries{series("a", values...), series("short", constant(0.1, 119)...)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Slack over samples 30..119: 88 at 0.5, one 0.9, one 0.8, limit 0.6.
	wantSlack := (88*0.1 - 0.3 - 0.2) / (90 * 0.6)
	if res.Row.Pods != 1 || res.Row.PodsBreaching != 1 || res.Row.BreachSamples != 2 || math.Abs(res.Row.Slack-wantSlack) > 1e-12 {
		t.Fatalf("row %+v, want 1 pod (the short one is not scored), 2 breaches, slack %.6f", res.Row, wantSlack)
	}
	if len(s.seen) != 120 || s.seen[10].OOMKilled || !s.seen[100].OOMKilled || s.seen[100].Limit != 0.6 {
		t.Fatalf("the sizer must see every sample, a breach as a kill at the limit, and no kill in warm-up")
	}
	if len(res.Breaching) != 1 || len(res.Breaching[0].Breaches) != 2 || res.Breaching[0].Breaches[0].Time != 6000 {
		t.Fatalf("breaches = %+v", res.Breaching)
	}
}

func TestBaselineIsARunningPeak(t *testing.T) {
	values := append(constant(0.5, 100), 0.6, 0.5, 0.58, 0.5)
	for len(values) < 120 {
		values = append(values, 0.5)
	}
	res, err := Replay(context.Background(), Baseline{}, []trace.UsageSeries{series("a", values...)}, Options{KeepPods: func(string) bool { return true }})
	if err != nil {
		t.Fatal(err)
	}
	lim := res.Pods[0].Limit
	if lim[100] != 1.15*0.5 || lim[101] != 1.15*0.6 || !math.IsNaN(lim[0]) || res.Row.BreachSamples != 1 {
		t.Fatalf("limits %v %v %v, breaches %d: want 1.15 × the peak so far (0.6 breaches 0.575 once), none drawn in warm-up", lim[0], lim[100], lim[101], res.Row.BreachSamples)
	}
}
