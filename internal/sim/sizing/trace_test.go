package sizing

import (
	"context"
	"hash/fnv"
	"testing"

	"github.com/strata-dev/strata/internal/sim/simtest"
	"github.com/strata-dev/strata/internal/sim/trace"
)

// TestGoalOnSharedTrace replays the shared GenAI memory file: the baseline
// must give the figures (20.0 % slack, 11 of 77 pods breaching:
// this validates the harness), and Strata's recommender must reach the
// goal: at most three quarters of the baseline's slack and at most half of
// its breaching pods. The halves by pod hash (`--split K/2`) are logged:
// the goal is not claimed on them (see docs/benchmarks.md).
func TestGoalOnSharedTrace(t *testing.T) {
	series, err := trace.LoadUsageSeries(simtest.GenAI(t, "pod_memory_util_anon.csv.gz"))
	if err != nil {
		t.Fatal(err)
	}
	score := func(s []trace.UsageSeries) (strata, base Row) {
		r, err := Replay(context.Background(), Strata{}, s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		b, err := Replay(context.Background(), Baseline{}, s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return r.Row, b.Row
	}
	s, b := score(series)
	if b.Pods != 77 || b.PodsBreaching != 11 || b.Slack < 0.1995 || b.Slack >= 0.2005 {
		t.Fatalf("baseline %+v, want 77 pods, 11 breaching, slack 20.0%%", b)
	}
	if s.Slack > 0.75*b.Slack || 2*s.PodsBreaching > b.PodsBreaching {
		t.Fatalf("strata %+v against baseline %+v: want slack ≤ %.4f and at most %d pods breaching", s, b, 0.75*b.Slack, b.PodsBreaching/2)
	}
	t.Logf("all: strata %.1f%% slack, %d pods breaching; baseline %.1f%%, %d", 100*s.Slack, s.PodsBreaching, 100*b.Slack, b.PodsBreaching)
	for k := uint32(0); k < 2; k++ {
		var half []trace.UsageSeries
		for _, x := range series {
			h := fnv.New32a()
			h.Write([]byte(x.Pod))
			if h.Sum32()%2 == k {
				half = append(half, x)
			}
		}
		s, b := score(half)
		t.Logf("split %d/2: strata %.1f%% slack, %d of %d pods breaching; baseline %.1f%%, %d", k, 100*s.Slack, s.PodsBreaching, s.Pods, 100*b.Slack, b.PodsBreaching)
	}
}
