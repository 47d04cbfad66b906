package rollouts

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
)

// Dev seeds 1..1000 were looked at while building the guard and this
// harness; the held-out seeds start at 100,001.
const heldOut = 100001

func TestRunIsDeterministic(t *testing.T) {
	for _, seed := range []uint64{3, 4, 5} {
		a, b := Run(Generate(seed), Config{}), Run(Generate(seed), Config{})
		if a.Scenario != b.Scenario || a.Halted != b.Halted || a.HaltedAfter != b.HaltedAfter || a.Reason != b.Reason || a.Incidents != b.Incidents {
			t.Fatalf("seed %d ran twice differently:\n%+v\n%+v", seed, a, b)
		}
	}
}

func TestGenerateDrawsEveryFamily(t *testing.T) {
	seen := map[Family]int{}
	for seed := range uint64(400) {
		s := Generate(seed)
		seen[s.Family]++
		if s.Replicas < 10 || s.Racks < 6 || s.Update.MaxParallel < 1 {
			t.Fatalf("seed %d: %s", seed, s.Describe())
		}
	}
	if seen[Good] < 150 || seen[Good] > 250 {
		t.Fatalf("good versions %d of 400, want about half", seen[Good])
	}
	for _, f := range Families[1:] {
		if seen[f] < 25 {
			t.Fatalf("family %s drawn %d times of 400", f, seen[f])
		}
	}
}

// TestGuardOnHeldOutRollouts holds the guard to its figures on 200
// held-out scenarios (80 with -short or the race detector; docs/benchmarks.md
// has 2,000): precision and recall at least 90 %. STRATA_ROLLOUT_SEEDS=N runs
// N instead.
func TestGuardOnHeldOutRollouts(t *testing.T) {
	n := 200
	if testing.Short() || raceDetector {
		n = 80
	}
	if v := os.Getenv("STRATA_ROLLOUT_SEEDS"); v != "" {
		if _, err := fmt.Sscan(v, &n); err != nil {
			t.Fatal(err)
		}
	}
	out := RunSeeds(context.Background(), heldOut, n, 2, Config{}, nil)
	s := Summarize(out)
	var b strings.Builder
	if err := s.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + b.String())
	if s.Precision < 0.9 || s.Recall < 0.9 {
		for _, o := range out {
			if o.Halted != o.Bad {
				t.Logf("seed %d: %s\n  halted %v: %s", o.Seed, o.Scenario, o.Halted, o.Reason)
			}
		}
		t.Fatalf("precision %.3f, recall %.3f; want both at least 0.9", s.Precision, s.Recall)
	}
}
