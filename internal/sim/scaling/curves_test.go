package scaling

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/strata-dev/strata/internal/autopilot/horizontal"
	"github.com/strata-dev/strata/internal/sim/trace"
)

// split is a way to hold days out: requests before `until` (0: all) are
// replayed, those from `from` on scored.
type split struct {
	name        string
	until, from int64
}

func utc(day string) int64 {
	t, err := time.Parse("2006-01-02", day)
	if err != nil {
		panic(err)
	}
	return t.Unix()
}

// splits of the shared trace: the design days (defaults are chosen on
// them), the held-out later days, and the design days' second half
// learnt from their first half.
var splits = []split{
	{"design (15-26 Nov)", utc("2024-11-27"), 0},
	{"held out (27-30 Nov)", 0, utc("2024-11-27")},
	{"second half of design (21-26 Nov)", utc("2024-11-27"), utc("2024-11-21")},
}

// TestTradeOffCurves (STRATA_SIM_CURVES=1; docs/benchmarks.md) replays
// both policies along their own trade-off curves on every split, seeds 1
// to 3 of the start-up draws, and logs the means: Strata's autoscaler by
// its risk (the other knobs at their defaults), the HPA rule by its target
// and scale-down window. Comparing at equal replica-hours needs both.
func TestTradeOffCurves(t *testing.T) {
	if os.Getenv("STRATA_SIM_CURVES") == "" {
		t.Skip("STRATA_SIM_CURVES=1 to run")
	}
	all, _, lat := sharedTrace(t)
	type policy struct {
		name string
		make func() Scaler
	}
	var policies []policy
	for _, risk := range []float64{0.15, 0.12, 0.1, 0.08, 0.06, 0.05, 0.04, 0.03, 0.02} {
		policies = append(policies, policy{fmt.Sprintf("strata --risk %.2f", risk), func() Scaler {
			cfg := horizontal.DefaultConfig()
			cfg.Min, cfg.Max, cfg.ScaleToZero, cfg.Risk = 0, 20, true, risk
			a, err := horizontal.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			return a
		}})
	}
	for _, hpa := range []struct {
		target float64
		window int64
	}{{0.9, 300}, {0.8, 300}, {0.7, 300}, {0.7, 600}, {0.6, 600}, {0.7, 1200}, {0.5, 600}, {0.5, 1200}} {
		policies = append(policies, policy{fmt.Sprintf("HPA --hpa-target %.1f --hpa-window %ds", hpa.target, hpa.window), func() Scaler {
			h := NewHPA(0, 20)
			h.Target, h.ScaleDownWindow = hpa.target, hpa.window
			return h
		}})
	}
	const seeds = 3
	type job struct{ s, p, seed int }
	rows := make([][][seeds]Row, len(splits))
	jobs := make(chan job)
	var wg sync.WaitGroup
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				sp := splits[j.s]
				var reqs []trace.Request
				for _, r := range all {
					if sp.until == 0 || r.Arrival < sp.until {
						reqs = append(reqs, r)
					}
				}
				r, err := Replay(context.Background(), Config{Requests: reqs, Startup: lat, Seed: int64(j.seed + 1), Min: 0, Max: 20, ScoreFrom: sp.from}, policies[j.p].make())
				if err != nil {
					t.Error(err)
					continue
				}
				rows[j.s][j.p][j.seed] = r.Row
			}
		}()
	}
	for s := range splits {
		rows[s] = make([][seeds]Row, len(policies))
		for p := range policies {
			for seed := 0; seed < seeds; seed++ {
				jobs <- job{s, p, seed}
			}
		}
	}
	close(jobs)
	wg.Wait()
	for s, sp := range splits {
		for p, pol := range policies {
			minutes, hours, p99 := 0.0, 0.0, 0.0
			for _, r := range rows[s][p] {
				minutes += float64(r.UnderProvisionedMinutes) / seeds
				hours += r.ReplicaHours / seeds
				p99 += r.WaitP99 / seeds
			}
			t.Logf("%s | %s | %.0f | %.1f | %.1f", sp.name, pol.name, minutes, hours, p99)
		}
	}
}
