package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/predict"
	"github.com/strata-dev/strata/internal/rebalance"
	"github.com/strata-dev/strata/internal/sim/churn"
	"github.com/strata-dev/strata/internal/sim/cluster"
	"github.com/strata-dev/strata/internal/sim/failsim"
	"github.com/strata-dev/strata/internal/sim/schedplacer"
	"github.com/strata-dev/strata/internal/sim/trace"
)

const modeChurn = "churn"

// churnFlags are `strata sim --mode churn`'s.
type churnFlags struct {
	rebalance     string
	migratePerDay float64
	cooldown      time.Duration
	load          float64
	patience      time.Duration
	warmup, days  float64
	evacuate      int
	failures      string
	failuresFrom  string
	repair        time.Duration
}

func addChurnFlags(fl *pflag.FlagSet, c *churnFlags) {
	fl.StringVar(&c.rebalance, "rebalance", "off", "churn: how often the rebalancer plans: off, hourly, daily or a duration (30m); each run is shown without and with it")
	fl.Float64Var(&c.migratePerDay, "migrate-per-day", 1, "churn: % of the running pods the rebalancer may move in any 24 hours")
	fl.DurationVar(&c.cooldown, "cooldown", 24*time.Hour, "churn: a pod moved less than this long ago stays")
	fl.Float64Var(&c.load, "load", 1.0, "churn: offered GPU load, as a multiple of the cell's GPU capacity")
	fl.DurationVar(&c.patience, "patience", time.Hour, "churn: how long a pod that found no room waits before it is turned away")
	fl.Float64Var(&c.warmup, "warmup", churn.DefaultWarmup, "churn: days simulated before the measured window")
	fl.Float64Var(&c.days, "days", churn.DefaultDays, "churn: days measured")
	fl.IntVar(&c.evacuate, "evacuate", 8, "churn: the most pods a node may hold for the rebalancer to empty it in one go")
	fl.StringVar(&c.failures, "failures", "", "churn: SSD failure tickets (ssd_failure_tag_*.csv) laid onto the cell's nodes in rack order: their failures strike the cell, and strata-predictive reads the correlated-failure model learned from the earlier ones")
	fl.StringVar(&c.failuresFrom, "failures-from", "2018-07-01", "churn: the tickets' date the simulation starts at (earlier tickets are the model's history)")
	fl.DurationVar(&c.repair, "repair", 24*time.Hour, "churn: how long a failed node stays down")
}

// rebalancePeriod reads --rebalance: 0 for off.
func rebalancePeriod(s string) (time.Duration, error) {
	switch strings.ToLower(s) {
	case "off", "", "none":
		return 0, nil
	case "hourly":
		return time.Hour, nil
	case "daily":
		return 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < time.Minute {
		return 0, failf("--rebalance: want off, hourly, daily or a duration of at least 1m (30m, 6h), got %q", s)
	}
	return d, nil
}

// churnRow is one line of `strata sim --mode churn`.
type churnRow struct {
	*churn.Result
	// Rebalance is the period ("" for the policy alone).
	Rebalance string `json:"rebalance,omitempty"`
	// FragmentationRecovered is the share of the GPU allocation lost to
	// fragmentation (pooled bound − policy alone) that the rebalancer won
	// back (with − without), docs/rebalancing.md; set on rows with a
	// rebalancer.
	FragmentationRecovered *float64 `json:"fragmentationRecovered,omitempty"`
}

func runSimChurn(ctx context.Context, g *globals, f *simFlags, t *trace.Trace) error {
	c := &f.churn
	period, err := rebalancePeriod(c.rebalance)
	if err != nil {
		return err
	}
	switch {
	case !(c.load > 0):
		return failf("--load: must be positive, got %g", c.load)
	case c.days <= 0 || c.warmup < 0:
		return failf("--days must be positive and --warmup not negative")
	case c.migratePerDay < 0 || c.migratePerDay > 100:
		return failf("--migrate-per-day: a percentage in 0..100, got %g", c.migratePerDay)
	case c.patience < 0 || c.cooldown < 0:
		return failf("--patience and --cooldown must not be negative")
	case g.output != "table" && g.output != "json":
		return failf("--output: unknown format %q (want table or json)", g.output)
	}
	show, err := progressStyle(g.stderr, f.noProgress, f.progress)
	if err != nil {
		return err
	}
	bar := newProgressBar(g.stderr, show)
	base := churn.Config{Nodes: t.Nodes, Pods: t.Pods, Seed: f.seed, TieBreak: f.tieBreak, Load: c.load,
		Patience: int64(c.patience / time.Second), Warmup: c.warmup, Days: c.days}
	if base.Patience == 0 {
		base.Patience = 1 // a patience of zero turns a pod away at once
	}
	run := func(cfg churn.Config, label string, pooled bool) (*churn.Result, error) {
		cfg.Progress = bar.func_(label, "hours")
		defer bar.done()
		if pooled {
			return churn.Pooled(ctx, cfg)
		}
		return churn.Run(ctx, cfg)
	}
	var onCell *failsim.OnCell
	var start int64
	if c.failures != "" {
		day, err := trace.DayOf(c.failuresFrom)
		if err != nil {
			return failf("--failures-from: %v", err)
		}
		tks, err := trace.LoadSSDTickets(c.failures)
		if err != nil {
			return failf("--failures: %v", err)
		}
		start = int64(day) * 86400
		if onCell, err = failsim.MapOnto(tks, len(t.Nodes), start); err != nil {
			return failf("--failures: %v", err)
		}
		for _, f := range onCell.Window {
			base.Failures = append(base.Failures, churn.NodeFailure{At: f.At, Node: f.Node})
		}
		base.Repair = int64(c.repair / time.Second)
	}
	var rows []churnRow
	var bound *churn.Result
	if period > 0 {
		if bound, err = run(base, churn.PooledName, true); err != nil {
			return failf("pooled bound: %v", err)
		}
	}
	for _, name := range strings.Split(f.policy, ",") {
		cfg := base
		cfg.Policy = name
		if sp, ok := strings.CutPrefix(name, "strata-"); ok {
			var fc *failsim.Forecaster
			if onCell != nil && sp == api.PolicyPredictive {
				if fc, err = failsim.NewForecaster(onCell, start, predict.DefaultCorrelated); err != nil {
					return failf("--failures: %v", err)
				}
				cfg.Clock = fc.Advance
			}
			cfg.NewPlacer = func(seed int64) cluster.Placer {
				p := schedplacer.New(sp, seed, -1).WithTarget(t.Pods)
				if fc != nil {
					p.WithForecasts(fc.Forecast)
				}
				return p
			}
		}
		alone, err := run(cfg, name, false)
		if err != nil {
			return failf("simulate %s: %v", name, err)
		}
		rows = append(rows, churnRow{Result: alone})
		if period == 0 {
			continue
		}
		cfg.Period = int64(period / time.Second)
		cfg.Rebalancer = &churn.Planner{PerDay: c.migratePerDay / 100, Period: cfg.Period, Cooldown: int64(c.cooldown / time.Second),
			Weights: rebalance.Weights{GPUFrag: 1}, Evacuate: c.evacuate, ForWaiting: true,
			Survival: churn.SurvivalOf(t.Pods, base.Patience)}
		with, err := run(cfg, name+" rebalanced", false)
		if err != nil {
			return failf("simulate %s with the rebalancer: %v", name, err)
		}
		row := churnRow{Result: with, Rebalance: period.String()}
		if loss := bound.GPUAlloc - alone.GPUAlloc; loss > 0 {
			rec := (with.GPUAlloc - alone.GPUAlloc) / loss
			row.FragmentationRecovered = &rec
		}
		rows = append(rows, row)
	}
	if bound != nil {
		rows = append(rows, churnRow{Result: bound})
	}
	if g.output == "json" {
		return printJSON(g.stdout, rows)
	}
	fmt.Fprintf(g.stdout, "churn of %d trace pods on %d nodes: load %.2f, %.0f arrivals a day, patience %v, %g days after %g of warm-up, seed %d\n",
		len(t.Pods), len(t.Nodes), c.load, rows[0].ArrivalsPerDay, c.patience, c.days, c.warmup, f.seed)
	if onCell != nil {
		fmt.Fprintf(g.stdout, "failures: %d tickets from %s laid onto the nodes (down %v each), %d earlier ones as history\n",
			len(onCell.Window), c.failuresFrom, c.repair, len(onCell.Past))
	}
	tb := newTable(g.stdout, "POLICY", "REBALANCE", "GPU ALLOC %", "FRAG RECOVERED", "MIGRATED/DAY", "GPU TURNED AWAY %", "WAITED", "FGD FRAG %", "FAILURES", "INTERRUPTED")
	for _, r := range rows {
		rec := "-"
		if r.FragmentationRecovered != nil {
			rec = fmt.Sprintf("%.0f%%", 100**r.FragmentationRecovered)
		}
		every := "-"
		if r.Rebalance != "" {
			every = r.Rebalance
		}
		tb.row(r.Policy, every, fmt.Sprintf("%.2f", r.GPUAlloc), rec, fmt.Sprintf("%.2f%%", r.MigratedPerDay),
			fmt.Sprintf("%.2f", r.TurnedAwayGPU), fmt.Sprint(r.Waited), fmt.Sprintf("%.2f", r.FragGPU), fmt.Sprint(r.Failures), fmt.Sprint(r.Interrupted))
	}
	return tb.flush()
}
