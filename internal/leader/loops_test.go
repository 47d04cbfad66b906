package leader

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// TestLoopTable: the leader's table passes its own check, and the check
// refuses what could not run: a loop without a name, twice, with both or
// neither of Run and Step, or a Step without a period.
func TestLoopTable(t *testing.T) {
	r := newRig(t, Config{})
	if err := checkLoops(r.l.loops); err != nil {
		t.Fatalf("the leader's table: %v", err)
	}
	step := func(context.Context) error { return nil }
	run := func(context.Context) {}
	for _, tc := range []struct {
		name  string
		loops []Loop
		want  string
	}{
		{"no name", []Loop{{Run: run}}, "without a name"},
		{"twice", []Loop{{Name: "a", Run: run}, {Name: "a", Run: run}}, "twice"},
		{"both", []Loop{{Name: "a", Run: run, Step: step, Every: time.Second}}, "one of them"},
		{"neither", []Loop{{Name: "a"}}, "one of them"},
		{"no period", []Loop{{Name: "a", Step: step}}, "without a period"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := checkLoops(tc.loops); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("checkLoops: %v, want %q", err, tc.want)
			}
		})
	}
}

// TestLoopsRunWithLeadership: every loop of the table runs while the
// leader leads (its metric says how many of it), and none once the term
// ends; a periodic loop's failed pass is counted and retried.
func TestLoopsRunWithLeadership(t *testing.T) {
	reg := prometheus.NewRegistry()
	extra := Loop{Name: "flaky", Every: time.Millisecond, Step: func(context.Context) error { return errors.New("not now") }}
	r := newRig(t, Config{Workers: 3, Metrics: reg, Loops: []Loop{extra}})
	running := func(name string) float64 { return metricValue(t, reg, "strata_leader_loop_running", "loop", name) }
	for _, lp := range r.l.loops {
		if got := running(lp.Name); got != 0 {
			t.Fatalf("loop %s runs %v before any term", lp.Name, got)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := r.l.Lead(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "every loop running", func() error {
		for _, lp := range r.l.loops {
			if got, want := running(lp.Name), float64(max(lp.Count, 1)); got != want {
				return errors.New(lp.Name + " not running yet")
			}
		}
		if metricValue(t, reg, "strata_leader_loop_steps_total", "loop", "flaky", "outcome", "error") < 2 {
			return errors.New("the flaky loop has not failed twice")
		}
		return nil
	})
	cancel()
	r.l.Follow()
	r.l.Wait()
	for _, lp := range r.l.loops {
		if got := running(lp.Name); got != 0 {
			t.Fatalf("loop %s still runs %v after the term", lp.Name, got)
		}
	}
}

// metricValue is the value of the gauge or counter name whose labels
// include the given name, value pairs (0 when there is none).
func metricValue(t testing.TB, reg *prometheus.Registry, name string, labels ...string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range families {
		if mf.GetName() != name {
			continue
		}
	metrics:
		for _, m := range mf.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for i := 0; i+1 < len(labels); i += 2 {
				if have[labels[i]] != labels[i+1] {
					continue metrics
				}
			}
			if g := m.GetGauge(); g != nil {
				return g.GetValue()
			}
			return m.GetCounter().GetValue()
		}
	}
	return 0
}
