package cli

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/strata-dev/strata/internal/bench"
)

func newBenchCmd(g *globals) *cobra.Command {
	var (
		cfg        bench.Config
		noProgress bool
	)
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Place a synthetic cell from scratch and report the scheduler's throughput and memory",
		Long: `Generate a deterministic synthetic cell (nodes with region/zone/datacenter/row/rack/
powerZone labels, CPU and GPU machine shapes with NUMA layouts) and a workload mix
(services, databases on pinned cores, batch, GPU training and shared-GPU inference,
with require/prefer/avoid rules, spread, affinity and anti-affinity, peers, data
locality and priorities), then place every workload from
scratch: one evaluation per workload, each plan committed through the server's
plan-applier rules (every node re-checked, gangs all-or-nothing, no eviction for
a preemptor that is not placed) to an in-memory state before the next.

Reports placements, failures by reason, wall time, placements/s, peak RSS (VmHWM),
heap in use, and an independent check that no node is overcommitted, no gang is
partial and no hard spread or self anti-affinity rule is broken (exit 1 if one is).`,
		Example: `  strata bench --nodes 10000 --tasks 100000
  strata bench --nodes 100000 --tasks 1000000 --policy spread -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(g); err != nil {
				return err
			}
			bar := autoBar(g.stderr, !noProgress)
			cfg.Progress = bar.func_("placing workloads", "workloads")
			res, err := bench.Run(cfg)
			bar.done()
			if err != nil {
				return failf("%v", err)
			}
			if g.structured() {
				if err := g.printData(res); err != nil {
					return err
				}
			} else {
				printBench(g, res)
			}
			if len(res.Overcommitted) > 0 || res.Unaccounted != 0 || len(res.GangViolations)+len(res.GangsBrokenByPreemption) > 0 || len(res.RelationViolations) > 0 {
				return failf("invariant broken: %d overcommit problems, %d replicas unaccounted, %d partial gangs, %d hard relation rules broken",
					len(res.Overcommitted), res.Unaccounted, len(res.GangViolations)+len(res.GangsBrokenByPreemption), len(res.RelationViolations))
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&cfg.Nodes, "nodes", 10000, "nodes in the cell")
	fl.IntVar(&cfg.Tasks, "tasks", 100000, "tasks (replicas) to place")
	fl.IntVar(&cfg.PerWorkload, "per-workload", 1000, "replicas per workload (one evaluation each)")
	fl.Int64Var(&cfg.Seed, "seed", 1, "seed of the cell, the workload mix and the evaluations")
	fl.StringVar(&cfg.Policy, "policy", bench.PolicyBinpack, "scheduling policy: binpack, spread or mixed (services spread, the rest binpack)")
	fl.BoolVar(&cfg.NoGangs, "no-gangs", false, "place training jobs as plain groups instead of gangs of 16")
	fl.BoolVar(&cfg.NoRelations, "no-relations", false, "leave spread, affinity, anti-affinity, peers and data locality out of the mix (the mix before they were added)")
	fl.IntVar(&cfg.Sample, "sample", 0, "feasible nodes sampled per group before picking the best (0: 5% of the nodes, at least 100; -1: all)")
	fl.BoolVar(&noProgress, "no-progress", false, "no progress (a bar on a terminal, else a line every 5s)")
	addOutputFlag(cmd, g)
	return cmd
}

func printBench(g *globals, r *bench.Result) {
	t := newTable(g.stdout, "FIGURE", "VALUE")
	mix := "with relation rules"
	if !r.Relations {
		mix = "without relation rules"
	}
	t.row("cell", fmt.Sprintf("%d nodes, %d tasks in %d workloads (%s), policy %s, seed %d, sample %d", r.Nodes, r.Tasks, r.Workloads, mix, r.Policy, r.Seed, r.Sample))
	t.row("placed", fmt.Sprintf("%d live at the end (%d placements committed, %d preempted)", r.Placed, r.Placements, r.Preempted))
	t.row("failed", strconv.Itoa(r.Failed))
	t.row("gangs", fmt.Sprintf("%d of %d placed whole, %d placed partial, %d left partial by preemption", r.GangsPlaced, r.Gangs, len(r.GangViolations), len(r.GangsBrokenByPreemption)))
	t.row("wall", fmt.Sprintf("%.2fs (schedule %.2fs, check+apply %.2fs; generate %.2fs)", r.WallSeconds, r.ScheduleSeconds, r.ApplySeconds, r.GenerateSeconds))
	t.row("placements/s", fmt.Sprintf("%.0f", r.PlacementsPerSec))
	t.row("evaluations", fmt.Sprintf("%d (%d plan parts rejected by CheckNode)", r.Evaluations, r.RejectedNodes))
	t.row("peak RSS", bytesStr(r.PeakRSSBytes))
	t.row("heap in use", bytesStr(int64(r.HeapInuseBytes)))
	t.row("utilisation", fmt.Sprintf("cpu %.1f%%, gpu %.1f%% of ready nodes", 100*r.CPUUtilisation, 100*r.GPUUtilisation))
	over := "none"
	if len(r.Overcommitted) > 0 {
		over = fmt.Sprintf("%d problems, first: %s", len(r.Overcommitted), r.Overcommitted[0])
	}
	t.row("overcommit", over)
	t.row("unaccounted", strconv.Itoa(r.Unaccounted))
	rel := "none broken"
	if len(r.RelationViolations) > 0 {
		rel = fmt.Sprintf("%d broken, first: %s", len(r.RelationViolations), r.RelationViolations[0])
	}
	if r.SpreadUnchecked > 0 {
		rel += fmt.Sprintf(" (%d spread groups not checked: preemption took replicas)", r.SpreadUnchecked)
	}
	t.row("hard relations", rel)
	t.row("GOMAXPROCS", strconv.Itoa(r.GOMAXPROCS))
	t.row("plan digest", r.PlanDigest)
	for _, k := range slices.Sorted(maps.Keys(r.FailureReasons)) {
		t.row("failed: "+k, strconv.Itoa(r.FailureReasons[k]))
	}
	t.flush()
}
