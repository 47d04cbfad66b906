package cli

import (
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/strata-dev/strata/internal/rolloutguard"
	"github.com/strata-dev/strata/internal/sim/rollouts"
)

// newSimRolloutsCmd is `strata sim rollouts`: the rollout guard measured
// on simulated rollouts of good and bad versions (docs/incidents.md).
func newSimRolloutsCmd(g *globals) *cobra.Command {
	var (
		noProgress bool
		progress   string
		scenarios  int
		firstSeed  uint64
		workers    int
		cfg        rollouts.Config
		runs       bool
	)
	cmd := &cobra.Command{
		Use:   "rollouts",
		Short: "Measure the rollout guard: precision and recall on simulated rollouts of good and bad versions",
		Long: `Simulate rollouts and count what the rollout guard (internal/rolloutguard) halts, the way
Azure's Gandalf (NSDI '20) was measured: precision (how many halts were of bad versions)
and recall (how many bad versions were halted).

Each seed draws one scenario: a cell of racks of two or three hardware classes, a workload
of 10 to 60 copies beside background workloads, an update policy, base rates of trouble, and
a new version that is good (rates within ±20 % of the old) or bad — crash-on-start, a slow
memory leak, failing a fraction of requests, or bad on one class of nodes only — with
random parameters. A rack going down, a rack whose network flaps and a bad node strike at
random, 30 % of runs each, unrelated to the version: the guard must not blame it for them.
The rollout moves by the deployments' own rules (rollout.Decide), every piece of trouble
goes to the incident engine, and the guard asks it before blaming the version. A run ends
at the guard's halt, or an hour after the rollout finished.

Seeds 1-1000 were looked at while building the guard; report on others (the figures in
docs/benchmarks.md use 100001-102000).`,
		Example: `  strata sim rollouts --scenarios 2000 --first-seed 100001
  strata sim rollouts --scenarios 2000 --first-seed 100001 -o json > rollouts.json
  strata sim rollouts --scenarios 500 --no-explain     # without the incident engine's explanations
  strata sim rollouts --scenarios 200 --runs -o json   # every run's outcome too`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if g.output != outTable && !g.structured() {
				return failf("--output: unknown format %q (want table, json or yaml)", g.output)
			}
			if scenarios < 1 {
				return failf("--scenarios: must be at least 1, got %d", scenarios)
			}
			if workers < 1 {
				return failf("--workers: must be at least 1, got %d", workers)
			}
			if a := cfg.Policy.Alpha; a < 0 || a >= 1 {
				return failf("--alpha: must be in (0, 1), got %g", a)
			}
			show, err := progressStyle(g.stderr, noProgress, progress)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
			defer stop()
			bar := newProgressBar(g.stderr, show)
			tick := bar.func_("rollouts", "scenarios")
			start := time.Now()
			out := rollouts.RunSeeds(ctx, firstSeed, scenarios, workers, cfg, func(done int) {
				if tick != nil {
					tick(done, scenarios)
				}
			})
			bar.done()
			if ctx.Err() != nil {
				fmt.Fprintf(g.stderr, "interrupted: %d of %d scenarios ran\n", len(out), scenarios)
			}
			sum := rollouts.Summarize(out)
			if g.structured() {
				report := struct {
					FirstSeed uint64             `json:"firstSeed"`
					Seconds   float64            `json:"seconds"`
					NoExplain bool               `json:"noExplain,omitempty"`
					Summary   rollouts.Summary   `json:"summary"`
					Runs      []rollouts.Outcome `json:"runs,omitempty"`
				}{FirstSeed: firstSeed, Seconds: time.Since(start).Seconds(), NoExplain: cfg.NoExplain, Summary: sum}
				if runs {
					report.Runs = out
				}
				return g.printData(report)
			}
			if err := sum.WriteTable(g.stdout); err != nil {
				return err
			}
			if runs {
				for _, o := range out {
					if o.Halted != o.Bad {
						fmt.Fprintf(g.stdout, "\nseed %d: %s\n  halted %v: %s\n", o.Seed, o.Scenario, o.Halted, o.Reason)
					}
				}
			}
			fmt.Fprintf(g.stdout, "\nseeds %d-%d, %s\n", firstSeed, firstSeed+uint64(scenarios)-1, time.Since(start).Round(time.Second))
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&g.output, "output", "o", outTable, "output format: table, json or yaml")
	fl.IntVar(&scenarios, "scenarios", 1000, "how many scenarios (seeds) to run")
	fl.Uint64Var(&firstSeed, "first-seed", 100001, "the first seed; seeds 1-1000 were used to build the guard")
	fl.IntVar(&workers, "workers", runtime.NumCPU(), "scenarios run at once")
	fl.BoolVar(&cfg.NoExplain, "no-explain", false, "judge without the incident engine's explanations (an ablation)")
	fl.Float64Var(&cfg.Policy.Alpha, "alpha", 0, "the guard's false-halt bound (default "+fmt.Sprint(rolloutguard.Policy{}.WithDefaults().Alpha)+")")
	fl.BoolVar(&runs, "runs", false, "also list the runs: every outcome with -o json or yaml, the misjudged ones in the table")
	fl.BoolVar(&noProgress, "no-progress", false, "no progress output (same as --progress none)")
	fl.StringVar(&progress, "progress", "auto", "progress on stderr: auto (a bar on a terminal, plain lines elsewhere), bar, plain or none")
	return cmd
}
