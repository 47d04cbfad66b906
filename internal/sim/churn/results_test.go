package churn

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/strata-dev/strata/internal/rebalance"
	"github.com/strata-dev/strata/internal/sim/simtest"
	"github.com/strata-dev/strata/internal/sim/trace"
)

// defaultPlanner is `strata sim --mode churn --rebalance hourly`'s.
func defaultPlanner(pods []trace.Pod, patience int64) *Planner {
	return &Planner{PerDay: 0.01, Period: 3600, Cooldown: 86400, Weights: rebalance.Weights{GPUFrag: 1}, Evacuate: 8, ForWaiting: true,
		Survival: SurvivalOf(pods, patience)}
}

// recovery runs cfg alone, rebalanced and pooled, and returns the share
// of the loss recovered (docs/rebalancing.md).
func recovery(t *testing.T, cfg Config) (alone, with, bound *Result, recovered float64) {
	t.Helper()
	var err error
	if alone, err = Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if bound, err = Pooled(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	cfg.Rebalancer, cfg.Period = defaultPlanner(cfg.Pods, cfg.patience()), 3600
	if with, err = Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	return alone, with, bound, (with.GPUAlloc - alone.GPUAlloc) / (bound.GPUAlloc - alone.GPUAlloc)
}

// TestChurnOnOpenbSmall runs in CI: a quarter of openb's nodes, a day of
// churn. The rebalancer must win GPU allocation back within its budget.
func TestChurnOnOpenbSmall(t *testing.T) {
	nodes, err := trace.LoadOpenbNodes(simtest.Openb(t, "openb_node_list_gpu_node.csv"))
	if err != nil {
		t.Fatal(err)
	}
	pods, err := trace.LoadOpenbPods(simtest.Openb(t, "openb_pod_list_default.csv"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Nodes: nodes[:300], Pods: pods, Policy: "FGD+", Seed: 42, Load: 1, Patience: 3600, Warmup: 0.5, Days: 1}
	alone, with, bound, rec := recovery(t, cfg)
	t.Logf("FGD+ %.2f%%, rebalanced %.2f%% (%.2f%% of pods a day), pooled %.2f%%: recovered %.2f", alone.GPUAlloc, with.GPUAlloc, with.MigratedPerDay, bound.GPUAlloc, rec)
	if with.MigratedPerDay > 1.05 {
		t.Errorf("moved %.2f%% of pods a day, budget 1%%", with.MigratedPerDay)
	}
	if !(with.GPUAlloc > alone.GPUAlloc) || with.Refused != 0 {
		t.Errorf("rebalanced %.2f%% vs %.2f%% alone, %d moves refused", with.GPUAlloc, alone.GPUAlloc, with.Refused)
	}
}

// TestChurnGoalRows is docs/rebalancing.md's table: every openb trace
// with times (STRATA_SIM_TRACES, comma list, narrows it), seeds 42 and
// 43, a week after a day of warm-up, load 1. Minutes of CPU: run with
// STRATA_SIM_RESULTS=1.
func TestChurnGoalRows(t *testing.T) {
	if os.Getenv("STRATA_SIM_RESULTS") == "" || testing.Short() {
		t.Skip("set STRATA_SIM_RESULTS=1 to run the churn goal rows")
	}
	nodes, err := trace.LoadOpenbNodes(simtest.Openb(t, "openb_node_list_gpu_node.csv"))
	if err != nil {
		t.Fatal(err)
	}
	traces := []string{"default", "cpu050", "cpu100", "cpu200", "gpushare40", "gpushare60", "gpushare80", "gpuspec10", "gpuspec20"}
	if s := os.Getenv("STRATA_SIM_TRACES"); s != "" && s != "all" {
		traces = strings.Split(s, ",")
	}
	sum, n := 0.0, 0
	for _, name := range traces {
		pods, err := trace.LoadOpenbPods(simtest.Openb(t, "openb_pod_list_"+name+".csv"))
		if err != nil {
			t.Fatal(err)
		}
		for _, seed := range []int64{42, 43} {
			cfg := Config{Nodes: nodes, Pods: pods, Policy: "FGD+", Seed: seed, Load: 1, Patience: 3600, Warmup: 1, Days: 7}
			alone, with, bound, rec := recovery(t, cfg)
			t.Logf("| %s | %d | %.2f | %.2f | %.2f | %.0f%% | %.2f%% |", name, seed, alone.GPUAlloc, with.GPUAlloc, bound.GPUAlloc, 100*rec, with.MigratedPerDay)
			if with.MigratedPerDay > 1.05 {
				t.Errorf("%s seed %d: moved %.2f%% of pods a day, budget 1%%", name, seed, with.MigratedPerDay)
			}
			if !(rec > 0) {
				t.Errorf("%s seed %d: the rebalancer recovered nothing (%.2f)", name, seed, rec)
			}
			sum += rec
			n++
		}
	}
	t.Logf("mean recovered over %d runs: %.2f", n, sum/float64(n))
}
