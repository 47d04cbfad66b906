package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/strata-dev/strata/internal/sim"
	"github.com/strata-dev/strata/internal/sim/cluster"
	"github.com/strata-dev/strata/internal/sim/policy"
	"github.com/strata-dev/strata/internal/sim/schedplacer"
	"github.com/strata-dev/strata/internal/sim/trace"
)

type simFlags struct {
	format      string
	nodes       string
	pods        []string
	machinesCSV string
	mode        string
	policy      string
	seed        int64
	seeds       string
	tieBreak    string
	csvPath     string
	jsonPath    string
	plotPath    string
	noProgress  bool
	progress    string
	sample      string
	explain     string
	churn       churnFlags // --mode churn (simchurn.go)
}

func newSimCmd(g *globals) *cobra.Command {
	var f simFlags
	cmd := &cobra.Command{
		Use:   "sim",
		Short: "Simulate a cell from a trace: placement policies, allocation over time, fragmentation",
		Long: `Simulate a cell on a virtual clock from a node list and a trace of pods.

Modes:
  inflation  the FGD paper's experiment (ATC '23): the trace's pods plus pods sampled
             with replacement until the GPU request reaches 1.3x capacity, shuffled
             with the seed, submitted one by one, never deleted. Without --seed the
             published seeds 42..51 are run and averaged.
  replay     creation and deletion times honoured; pods that do not fit wait and
             their pending times are reported.
  churn      a cell kept at --load of its GPU capacity: pods drawn from the trace arrive,
             run their trace lifetime and leave, so free capacity scatters; with
             --rebalance the rebalancer moves running pods to gather it
             (docs/rebalancing.md).

Trace formats: openb (the Alibaba GPU trace CSVs), google (cluster-usage 2011:
task_events files as --pods, machine_events as --nodes or --machines-csv), native
(one YAML/JSON file with nodes and pods, as --pods).

Policies: ` + strings.Join(policy.PaperNames(), ", ") + ` (the paper's, scored as its
simulator scores them), ` + policy.FGDPlusName + ` (Strata's own: FGD whose ties go to the node
that keeps CPU and GPUs in proportion), and strata-<type> for every scheduling
policy type of the server (strata-binpack, strata-spread, strata-fgd,
strata-dot-product, strata-random: Strata's scheduler, the code the server runs;
strata-fgd is FGD+ in the scheduler, measured against the trace's pods), a comma
list, or "all".`,
		Example: `  strata sim --nodes ../shared/traces/openb/openb_node_list_gpu_node.csv \
             --pods ../shared/traces/openb/openb_pod_list_default.csv --policy FGD
  strata sim --nodes N.csv --pods P.csv --policy all -o json
  strata sim --nodes N.csv --pods P.csv --policy BestFit --seed 42 --csv series.csv --plot alloc.png
  strata sim --format native --pods scenario.yaml --mode replay
  strata sim --format google --pods task_events-part-00001-of-00500.csv.gz --machines-csv machines.csv \
             --mode replay --policy BestFit,strata-binpack --plot replay.png --csv series.csv
  strata sim grow --format google --copies 6 --shift 60 --events 450000 -o big.csv.gz PART.csv.gz
  strata sim --nodes N.csv --pods P.csv --policy FGD,strata-binpack --explain openb-pod-0042`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if g.output != "table" && g.output != "json" && g.output != "yaml" && g.output != "csv" {
				return failf("--output: unknown format %q (want table, json, yaml or csv)", g.output)
			}
			ctx, seedGiven := cmd.Context(), cmd.Flags().Changed("seed")
			return interruptible(ctx, func() error { return runSim(ctx, g, &f, seedGiven) })
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.format, "format", "openb", "trace format: openb, google or native")
	fl.StringVar(&f.nodes, "nodes", "", "node list (openb node CSV, or google machine_events)")
	fl.StringSliceVar(&f.pods, "pods", nil, "pod trace file(s) (openb pod CSV, google task_events parts, or a native file)")
	fl.StringVar(&f.machinesCSV, "machines-csv", "", "google: machines as a CSV machine_id,cpu,memory of normalized capacities")
	fl.StringVar(&f.mode, "mode", "inflation", "inflation, replay or churn")
	addChurnFlags(fl, &f.churn)
	fl.StringVar(&f.policy, "policy", "FGD", "placement policy, or all")
	fl.Int64Var(&f.seed, "seed", 42, "seed of a single run (default in inflation mode: the mean over seeds 42..51)")
	fl.StringVar(&f.seeds, "seeds", "42..51", "seeds averaged in inflation mode when --seed is not given, as A..B or a comma list")
	fl.StringVar(&f.tieBreak, "tie-break", "rank", "how equal scores are broken: rank (a seeded random node order fixed per run, as the paper's simulator), random (a fresh draw per pod) or first (trace order)")
	fl.StringVar(&f.csvPath, "csv", "", "write the allocation series of every run as CSV: policy, seed, time, allocation %, pods pending and running, evictions so far")
	fl.StringVar(&f.jsonPath, "json", "", "write the full results as JSON")
	fl.StringVar(&f.plotPath, "plot", "", "write a PNG plot of one run: allocation vs arrived GPU workload (inflation), allocation and pods waiting over time (replay)")
	fl.BoolVar(&f.noProgress, "no-progress", false, "no progress output (same as --progress none)")
	fl.StringVar(&f.progress, "progress", "auto", "progress on stderr: auto (a bar on a terminal, else a line every 5s), bar, plain (a line about every second) or none")
	fl.StringVar(&f.sample, "sample", "auto", "strata-* policies: feasible nodes the scheduler samples before picking the best: all, server (the server's default, max(100, 5% of the nodes)), a number, or auto (all in inflation mode, as the paper's simulator scores every node; server in replay mode, as the server would run)")
	fl.StringVar(&f.explain, "explain", "", "explain one pod's placement (a single run per policy, with --seed): nodes rejected by each check, the chosen node's score components and the runners-up; inflated copies are named POD~k")
	fl.StringVarP(&g.output, "output", "o", "table", "output format: table, json, yaml, or csv (the summary: one row per run, with pending-time percentiles and evictions)")
	cmd.AddCommand(newSimGrowCmd(g))
	cmd.AddCommand(newSimRolloutsCmd(g))
	cmd.AddCommand(newSimAutopilotCmds(g)...)
	cmd.AddCommand(newSimFailuresCmd(g))
	cmd.AddCommand(newSimCorrelatedCmd(g))
	return cmd
}

// stopGrace is how long a cancelled command's work may take to notice.
const stopGrace = 250 * time.Millisecond

// interruptible runs work and returns its error, or ctx's error at most
// stopGrace after ctx is done: the simulator stops at its next event, but
// a trace still being read or a file being written must not hold the
// process after Ctrl-C or SIGTERM.
func interruptible(ctx context.Context, work func() error) error {
	done := make(chan error, 1)
	go func() { done <- work() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	t := time.NewTimer(stopGrace)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		return ctx.Err()
	}
}

func loadSimTrace(f *simFlags) (*trace.Trace, error) {
	switch f.format {
	case "openb":
		if f.nodes == "" || len(f.pods) != 1 {
			return nil, failf("--format openb needs --nodes NODE_CSV and one --pods POD_CSV")
		}
		nodes, err := trace.LoadOpenbNodes(f.nodes)
		if err != nil {
			return nil, failf("--nodes: %v", err)
		}
		pods, err := trace.LoadOpenbPods(f.pods[0])
		if err != nil {
			return nil, failf("--pods: %v", err)
		}
		return &trace.Trace{Nodes: nodes, Pods: pods}, nil
	case "google":
		if len(f.pods) == 0 || (f.nodes == "") == (f.machinesCSV == "") {
			return nil, failf("--format google needs --pods TASK_EVENTS... and one of --nodes MACHINE_EVENTS or --machines-csv")
		}
		pods, err := trace.LoadGoogleTaskEvents(trace.DefaultGoogleScale, f.pods...)
		if err != nil {
			return nil, failf("--pods: %v", err)
		}
		t := &trace.Trace{Pods: pods}
		if f.machinesCSV != "" {
			if t.Nodes, err = trace.LoadMachineCSV(f.machinesCSV, trace.DefaultGoogleScale); err != nil {
				return nil, failf("--machines-csv: %v", err)
			}
		} else if t.Nodes, t.NodeEvents, err = trace.LoadGoogleMachineEvents(f.nodes, trace.DefaultGoogleScale); err != nil {
			return nil, failf("--nodes: %v", err)
		}
		// machine_events spans the whole trace: keep what happens to the
		// cell during the task parts' window (earlier events set the
		// state it opens with).
		if start, end, ok := trace.Window(t.Pods); ok {
			t.NodeEvents = trace.ClipNodeEvents(t.NodeEvents, start, end)
		}
		return t, nil
	case "native":
		if len(f.pods) != 1 {
			return nil, failf("--format native needs one --pods FILE holding nodes and pods")
		}
		t, err := trace.LoadNative(f.pods[0])
		if err != nil {
			return nil, failf("--pods: %v", err)
		}
		return t, nil
	}
	return nil, failf("--format: unknown %q (want openb, google or native)", f.format)
}

// parseSample reads --sample as scheduler.Options.FeasibleSample.
func parseSample(s string, mode sim.Mode) (int, error) {
	switch s {
	case "auto", "":
		if mode == sim.ModeReplay {
			return 0, nil
		}
		return -1, nil
	case "all", "-1":
		return -1, nil
	case "server", "0":
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, failf("--sample: want all, server, auto or a positive number of nodes, got %q", s)
	}
	return n, nil
}

func parseSeeds(s string) ([]int64, error) {
	if a, b, ok := strings.Cut(s, ".."); ok {
		lo, err1 := strconv.ParseInt(a, 10, 64)
		hi, err2 := strconv.ParseInt(b, 10, 64)
		if err1 != nil || err2 != nil || hi < lo || hi-lo > 1000 {
			return nil, failf("--seeds: want A..B with A <= B, got %q", s)
		}
		var out []int64
		for v := lo; v <= hi; v++ {
			out = append(out, v)
		}
		return out, nil
	}
	var out []int64
	for _, p := range strings.Split(s, ",") {
		v, err := strconv.ParseInt(strings.TrimSpace(p), 10, 64)
		if err != nil {
			return nil, failf("--seeds: %q is not an integer", p)
		}
		out = append(out, v)
	}
	return out, nil
}

// simRow is one line of the summary.
type simRow struct {
	Policy     string  `json:"policy"`
	Seeds      []int64 `json:"seeds"`
	GPUAlloc   float64 `json:"gpuAlloc"`
	CPUAlloc   float64 `json:"cpuAlloc"`
	MemAlloc   float64 `json:"memAlloc"`
	FragRatio  float64 `json:"fragRatio"`
	Placed     int     `json:"placed,omitempty"`
	Failed     int     `json:"failed,omitempty"`
	PendingP50 float64 `json:"pendingP50,omitempty"`
	PendingP99 float64 `json:"pendingP99,omitempty"`
	Seconds    float64 `json:"seconds"`

	// Replay: what waited and for how long, what was evicted, and the
	// cell's allocation over time (sampled at simSeriesPoints times).
	Mode              sim.Mode          `json:"mode"`
	Submitted         int               `json:"submitted,omitempty"`
	CarriedOver       int               `json:"carriedOver,omitempty"`
	Pending           *sim.PendingStats `json:"pending,omitempty"`
	PendingByPriority []sim.BandPending `json:"pendingByPriority,omitempty"`
	TracePending      *sim.PendingStats `json:"tracePending,omitempty"`
	Evicted           int               `json:"evicted,omitempty"`
	Evictions         *sim.Evictions    `json:"evictions,omitempty"`
	Updates           int               `json:"updates,omitempty"`
	Running           int               `json:"running,omitempty"`
	Waiting           int               `json:"waiting,omitempty"`
	Utilisation       []sim.Point       `json:"utilisation,omitempty"`

	Explanation *cluster.Explanation `json:"explanation,omitempty"`
}

// simSeriesPoints is how many times of a replay the summary shows.
const simSeriesPoints = 48

// replayRow is the summary row of one replay run.
func replayRow(res *sim.Result, seconds float64) simRow {
	ev := res.Evictions
	pending := res.Pending
	return simRow{Policy: res.Policy, Seeds: []int64{res.Seed}, GPUAlloc: res.GPUAlloc, CPUAlloc: res.CPUAlloc,
		MemAlloc: res.MemAlloc, FragRatio: res.FragRatio, Placed: res.Placed, PendingP50: res.Pending.P50,
		PendingP99: res.Pending.P99, Seconds: seconds, Mode: res.Mode, Submitted: res.Submitted, CarriedOver: res.CarriedOver, Pending: &pending,
		PendingByPriority: res.PendingByPriority, TracePending: res.TracePending, Evicted: res.Evicted + ev.Trace,
		Evictions: &ev, Updates: res.Updates, Running: res.Running, Waiting: res.Waiting,
		Utilisation: sim.Utilisation(res, simSeriesPoints), Explanation: res.Explanation}
}

func runSim(ctx context.Context, g *globals, f *simFlags, seedGiven bool) error {
	t, err := loadSimTrace(f)
	if err != nil {
		return err
	}
	mode := sim.Mode(f.mode)
	if f.mode == modeChurn {
		return runSimChurn(ctx, g, f, t)
	}
	if mode != sim.ModeInflation && mode != sim.ModeReplay {
		return failf("--mode: unknown %q (want inflation, replay or churn)", f.mode)
	}
	policies := strings.Split(f.policy, ",")
	if f.policy == "all" {
		policies = append(policy.Names(), "strata-binpack", "strata-spread", "strata-fgd")
	}
	averaged := mode == sim.ModeInflation && !seedGiven && f.explain == ""
	var seeds []int64
	if averaged {
		if seeds, err = parseSeeds(f.seeds); err != nil {
			return err
		}
	}
	single := !averaged && len(policies) == 1
	if !single && f.plotPath != "" {
		return failf("--plot needs a single run: one --policy (and, in inflation mode, a --seed)")
	}
	if averaged && f.csvPath != "" {
		return failf("--csv writes the series of runs with a --seed (in inflation mode without --seed, runs are averaged)")
	}
	sample, err := parseSample(f.sample, mode)
	if err != nil {
		return err
	}
	keepSeries := single || mode == sim.ModeReplay || f.csvPath != ""
	show, err := progressStyle(g.stderr, f.noProgress, f.progress)
	if err != nil {
		return err
	}
	bar := newProgressBar(g.stderr, show)
	var rows []simRow
	var full []any
	var runs []*sim.Result // every run, for the CSV outputs
	for _, name := range policies {
		cfg := sim.Config{Nodes: t.Nodes, Pods: t.Pods, NodeEvents: t.NodeEvents, Mode: mode, Policy: name,
			Seed: f.seed, TieBreak: f.tieBreak, NoSeries: !keepSeries, Explain: f.explain}
		if sp, ok := strings.CutPrefix(name, "strata-"); ok {
			// The server's own scheduler, with the sampling --sample says.
			cfg.NewPlacer = func(seed int64) cluster.Placer { return schedplacer.New(sp, seed, sample).WithTarget(t.Pods) }
		}
		start := time.Now()
		if averaged {
			cfg.Progress = bar.func_(name, "seeds")
			res, err := sim.RunInflationSeeds(ctx, cfg, seeds, 0)
			bar.done()
			if err != nil {
				return failf("simulate %s: %v", name, err)
			}
			rows = append(rows, simRow{Policy: name, Seeds: seeds, GPUAlloc: res.MeanGPUAlloc, CPUAlloc: res.MeanCPUAlloc,
				MemAlloc: res.MeanMemAlloc, FragRatio: res.MeanFragRatio, Seconds: time.Since(start).Seconds(), Mode: mode})
			full = append(full, res)
			runs = append(runs, res.Runs...)
			continue
		}
		cfg.Progress = bar.func_(name, progressUnit(mode))
		res, err := sim.Run(ctx, cfg)
		bar.done()
		if err != nil {
			return failf("simulate %s: %v", name, err)
		}
		row := simRow{Policy: name, Seeds: []int64{f.seed}, GPUAlloc: res.GPUAlloc, CPUAlloc: res.CPUAlloc,
			MemAlloc: res.MemAlloc, FragRatio: res.FragRatio, Placed: res.Placed, Failed: res.Failed,
			PendingP50: res.Pending.P50, PendingP99: res.Pending.P99, Seconds: time.Since(start).Seconds(),
			Explanation: res.Explanation, Mode: mode}
		if mode == sim.ModeReplay {
			row = replayRow(res, row.Seconds)
		}
		rows = append(rows, row)
		if f.explain != "" && res.Explanation == nil {
			return failf("--explain: no pod named %q was submitted (inflated copies are named %s~k)", f.explain, f.explain)
		}
		full = append(full, res)
		runs = append(runs, res)
		if single && f.plotPath != "" {
			if err := writeFile(f.plotPath, func(w io.Writer) error { return sim.PlotFor(res).WritePNG(w) }); err != nil {
				return err
			}
		}
	}
	if f.csvPath != "" {
		if err := writeFile(f.csvPath, func(w io.Writer) error { return sim.WriteSeriesCSV(w, runs...) }); err != nil {
			return err
		}
	}
	if f.jsonPath != "" {
		if err := writeFile(f.jsonPath, func(w io.Writer) error { return sim.WriteJSON(w, full) }); err != nil {
			return err
		}
	}
	switch g.output {
	case "json", "yaml":
		return g.printData(rows)
	case "csv":
		return sim.WriteSummaryCSV(g.stdout, runs...)
	}
	if mode == sim.ModeReplay {
		return printReplay(g.stdout, t, rows)
	}
	fmt.Fprintf(g.stdout, "%s of %d pods on %d nodes\n", mode, len(t.Pods), len(t.Nodes))
	tb := newTable(g.stdout, "POLICY", "SEEDS", "GPU ALLOC %", "CPU ALLOC %", "MEM ALLOC %", "GPU FRAG %", "TIME")
	for _, r := range rows {
		tb.row(r.Policy, seedsLabel(r.Seeds), ff1(r.GPUAlloc), ff1(r.CPUAlloc), ff1(r.MemAlloc), ff1(r.FragRatio),
			fmt.Sprintf("%.2fs", r.Seconds))
	}
	if err := tb.flush(); err != nil {
		return err
	}
	for _, r := range rows {
		if r.Explanation != nil {
			printSimExplanation(g.stdout, r.Policy, r.Seeds[0], r.Explanation)
		}
	}
	return nil
}

// printSimExplanation shows why a pod went where it did under one policy.
func printSimExplanation(w io.Writer, policy string, seed int64, e *cluster.Explanation) {
	fmt.Fprintf(w, "\n%s under %s (seed %d", e.Pod, policy, seed)
	if e.Attempts > 1 {
		fmt.Fprintf(w, ", attempt %d", e.Attempts)
	}
	fmt.Fprint(w, "): ")
	if e.Placed {
		fmt.Fprintf(w, "placed on %s", e.Node)
		if len(e.GPUs) > 0 {
			fmt.Fprintf(w, ", GPUs %v", e.GPUs)
		}
		fmt.Fprintln(w)
	} else {
		fmt.Fprintln(w, "not placed")
	}
	fmt.Fprintf(w, "  %d nodes, %d feasible\n", e.Nodes, e.Feasible)
	for _, r := range e.Rejected {
		fmt.Fprintf(w, "  %6d  %s\n", r.Nodes, r.Reason)
	}
	if e.Tied > 1 {
		fmt.Fprintf(w, "  %d feasible nodes share the best score; the tie rule chose\n", e.Tied)
	}
	if len(e.Components) > 0 {
		fmt.Fprintf(w, "  score %.4g:%s\n", e.Score,
			components(len(e.Components), func(k int) (string, float64) { return e.Components[k].Name, e.Components[k].Score }))
	}
	if len(e.RunnersUp) > 0 {
		fmt.Fprint(w, "  runners-up:")
		for k, n := range e.RunnersUp {
			sep := ","
			if k == 0 {
				sep = ""
			}
			fmt.Fprintf(w, "%s %s %.4g", sep, n.Node, n.Score)
		}
		fmt.Fprintln(w)
	}
}

// writeFile writes path through a temporary file renamed into place, so
// an interrupted run never leaves a half-written result.
func writeFile(path string, write func(io.Writer) error) error {
	out, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return failf("%v", err)
	}
	defer os.Remove(out.Name()) // after a successful rename there is nothing left to remove
	if err := write(out); err != nil {
		out.Close()
		return failf("write %s: %v", path, err)
	}
	if err := out.Chmod(0o644); err != nil {
		out.Close()
		return failf("write %s: %v", path, err)
	}
	if err := out.Close(); err != nil {
		return failf("write %s: %v", path, err)
	}
	if err := os.Rename(out.Name(), path); err != nil {
		return failf("write %s: %v", path, err)
	}
	return nil
}

// progressUnit names what a single run's progress counts.
func progressUnit(m sim.Mode) string {
	if m == sim.ModeReplay {
		return "events"
	}
	return "pods"
}

func seedsLabel(s []int64) string {
	if len(s) == 1 {
		return strconv.FormatInt(s[0], 10)
	}
	return fmt.Sprintf("%d..%d (mean)", s[0], s[len(s)-1])
}

func ff1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
