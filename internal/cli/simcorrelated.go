package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/strata-dev/strata/internal/sim/failsim"
	"github.com/strata-dev/strata/internal/sim/trace"
)

// newSimCorrelatedCmd is `strata sim correlated`: SSD failure tickets
// replayed on a fleet of replica groups, reactive replacement on a
// rack-oblivious placement against the correlated-failure model.
func newSimCorrelatedCmd(g *globals) *cobra.Command {
	var (
		tickets      string
		nodesPerRack int
		cfg          = failsim.DefaultReplay
		quiet        bool
	)
	cmd := &cobra.Command{
		Use:   "correlated --tickets FILE",
		Short: "Replay SSD failure tickets on a fleet of replica groups: reactive replacement against the correlated-failure model",
		Long: `Replay Alibaba's SSD failure tickets (FAST '21; ssd_failure_tag_*.csv) on a simulated fleet whose
racks and rooms are the tickets' own, filled to --nodes-per-rack nodes (the tickets' nodes and
nodes that never fail that year), running replica groups of --replicas (filling --utilization
of --slots per node; each replica is replaced by a fresh one after an exponential --lifetime,
so the cell keeps placing work). A ticket takes its node down for --repair and interrupts
every replica on it. Two policies, side by side:

  reactive    replicas on uniformly random nodes with room (one per node, racks not looked
              at); an interrupted replica is replaced at once
  predictive  replicas in distinct racks (and rooms where it can); every --tick the
              correlated-failure model (internal/predict: the hazard that a node, its rack or
              its room fails within a week given when they last failed, learned from earlier
              tickets only) ranks the nodes and the riskiest, up to --budget of the fleet,
              are drained: their replicas live-migrate away (make before break), no new ones
              land there; a replica interrupted anyway is replaced at once

Reported: replicas interrupted, groups that lost two replicas within --window (and where the
two failed nodes sat), live migrations, the share of the fleet kept drained.
docs/prediction.md describes the fleet and the figures.`,
		Example: `  strata sim correlated --tickets ../shared/traces/failures/ssd_failure_tag_2018.csv.gz
  strata sim correlated --tickets ssd.csv.gz --nodes-per-rack 40 --budget 0.05 -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if tickets == "" {
				return failf("--tickets: the SSD failure tickets file is required")
			}
			if nodesPerRack < 1 {
				return failf("--nodes-per-rack: must be at least 1, got %d", nodesPerRack)
			}
			if !(cfg.Budget >= 0 && cfg.Budget < 1) {
				return failf("--budget: a share of the fleet in [0, 1), got %g", cfg.Budget)
			}
			if !(cfg.Utilization > 0 && cfg.Utilization <= 1) {
				return failf("--utilization: a share of the slots in (0, 1], got %g", cfg.Utilization)
			}
			if g.output != "table" && g.output != "json" {
				return failf("--output: unknown format %q (want table or json)", g.output)
			}
			tks, err := trace.LoadSSDTickets(tickets)
			if err != nil {
				return failf("--tickets: %v", err)
			}
			fleet, err := failsim.BuildFleet(tks, nodesPerRack)
			if err != nil {
				return failf("--tickets: %v", err)
			}
			var rows []*failsim.ReplayResult
			for _, policy := range []string{failsim.Reactive, failsim.Predictive} {
				c := cfg
				if !quiet {
					start, last := time.Now(), time.Time{}
					c.Progress = func(done, total int) {
						if now := time.Now(); now.Sub(last) >= time.Second || done == total {
							last = now
							fmt.Fprintf(g.stderr, "[%5.1fs] %s: %d/%d tickets\n", now.Sub(start).Seconds(), policy, done, total)
						}
					}
				}
				res, err := failsim.Replay(cmd.Context(), fleet, tks, c, policy)
				if err != nil {
					return failf("%s: %v", policy, err)
				}
				rows = append(rows, res)
			}
			if g.output == "json" {
				return printJSON(g.stdout, rows)
			}
			return printCorrelated(g, rows, cfg)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&tickets, "tickets", "", "SSD failure tickets CSV (plain or gzipped)")
	fl.IntVar(&nodesPerRack, "nodes-per-rack", 20, "fill every rack to this many nodes")
	fl.IntVar(&cfg.SlotsPerNode, "slots", cfg.SlotsPerNode, "replicas a node can run")
	fl.Float64Var(&cfg.Utilization, "utilization", cfg.Utilization, "share of all slots the groups fill")
	fl.IntVar(&cfg.Replicas, "replicas", cfg.Replicas, "replicas per group")
	fl.Int64Var(&cfg.Repair, "repair", cfg.Repair, "seconds a failed node stays down")
	fl.Int64Var(&cfg.Lifetime, "lifetime", cfg.Lifetime, "mean seconds a replica runs before a fresh one replaces it")
	fl.Int64Var(&cfg.Window, "window", cfg.Window, "seconds within which two failed replicas count as a group losing two")
	fl.Float64Var(&cfg.Budget, "budget", cfg.Budget, "predictive: share of the fleet it may keep drained")
	fl.Int64Var(&cfg.Tick, "tick", cfg.Tick, "predictive: seconds between readings of the model")
	fl.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the placements and lifetimes")
	fl.BoolVar(&quiet, "quiet", false, "no progress lines on stderr")
	fl.StringVarP(&g.output, "output", "o", "table", "output format: table or json (one row per policy)")
	return cmd
}

func printCorrelated(g *globals, rows []*failsim.ReplayResult, cfg failsim.ReplayConfig) error {
	a, b := rows[0], rows[1]
	fmt.Fprintf(g.stdout, "%d tickets on %d nodes in %d racks; %d groups of %d replicas (%d replicas)\n",
		a.Failures, a.Nodes, a.Racks, a.Groups, cfg.Replicas, a.Tasks)
	change := func(x, y int) string {
		if x == 0 {
			return "-"
		}
		return fmt.Sprintf("%+.1f%%", 100*float64(y-x)/float64(x))
	}
	tb := newTable(g.stdout, "", a.Policy, b.Policy, "CHANGE")
	tb.row("replicas interrupted", fmt.Sprint(a.Interrupted), fmt.Sprint(b.Interrupted), change(a.Interrupted, b.Interrupted))
	tb.row("groups losing two within window", fmt.Sprint(a.GroupsLosingTwo), fmt.Sprint(b.GroupsLosingTwo), change(a.GroupsLosingTwo, b.GroupsLosingTwo))
	tb.row("  two on one node", fmt.Sprint(a.DoubleLosses.SameNode), fmt.Sprint(b.DoubleLosses.SameNode), "")
	tb.row("  two in one rack", fmt.Sprint(a.DoubleLosses.SameRack), fmt.Sprint(b.DoubleLosses.SameRack), "")
	tb.row("  two in one room", fmt.Sprint(a.DoubleLosses.SameRoom), fmt.Sprint(b.DoubleLosses.SameRoom), "")
	tb.row("  two rooms apart", fmt.Sprint(a.DoubleLosses.Apart), fmt.Sprint(b.DoubleLosses.Apart), "")
	tb.row("failures on a drained node", fmt.Sprint(a.StruckDrained), fmt.Sprint(b.StruckDrained), "")
	tb.row("live migrations", fmt.Sprint(a.Migrations), fmt.Sprint(b.Migrations), "")
	tb.row("fleet kept drained", fmt.Sprintf("%.1f%%", 100*a.DrainedShare), fmt.Sprintf("%.1f%%", 100*b.DrainedShare), "")
	tb.row("replacements that found no node", fmt.Sprint(a.Unplaced), fmt.Sprint(b.Unplaced), "")
	return tb.flush()
}
