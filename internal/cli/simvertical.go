package cli

import (
	"context"
	"fmt"
	"io"
	"sort"

	"github.com/spf13/cobra"

	"github.com/strata-dev/strata/internal/autopilot/vertical"
	"github.com/strata-dev/strata/internal/sim"
	"github.com/strata-dev/strata/internal/sim/sizing"
	"github.com/strata-dev/strata/internal/sim/trace"
)

type simVerticalFlags struct {
	usage      string
	split      string
	plotPath   string
	plotPods   []string
	minAllowed float64
	maxAllowed float64
	explain    bool
	progress   string
	cfg        vertical.Config
}

func newSimVerticalCmd(g *globals) *cobra.Command {
	var f simVerticalFlags
	cmd := &cobra.Command{
		Use:   "vertical --usage FILE",
		Short: "Replay per-pod usage against Strata's vertical recommender and the VPA-like baseline",
		Long: `Replay a usage file (the GenAI trace's pod_memory_util_anon.csv format:
value,timestamp_anon,container_ip, the value a share of the pod's hand-set limit)
against vertical sizing policies and score them.

Each pod's samples are shown to a policy in time order; the policy sets the limit
for the next sample from the past alone. Pods with at least 120 samples are
scored; the first quarter of each is warm-up (observed, not scored); a scored
sample above the limit in force is a breach (an OOM kill), which the policy is
told of before the next sample.

Rows, one per policy: pods scored, slack = Σ(limit − usage) / Σ limit over the
scored samples, pods with a breach, breached samples.
  strata    Strata's recommender (internal/autopilot/vertical; docs/autoscaling.md):
            a steady model (2 h peak + 2 % + 0.7 × the largest 3-minute rise in
            12 h) or, for tasks whose usage jumps and falls back, a bursty model
            (24 h peak + 2.5 × the burst size); a kill raises the floor at once.
  baseline  1.15 × the peak seen so far (the VPA's margin on a running peak).

--split K/N scores only the pods whose id hashes to K modulo N: hold some pods
out while tuning, then score them once.`,
		Example: `  strata sim vertical --usage ../shared/traces/genai/pod_memory_util_anon.csv.gz
  strata sim vertical --usage pod_memory_util_anon.csv.gz -o json
  strata sim vertical --usage pod_memory_util_anon.csv.gz --split 1/2
  strata sim vertical --usage pod_memory_util_anon.csv.gz --plot vertical.png --explain`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(g); err != nil {
				return err
			}
			ctx := cmd.Context()
			return interruptible(ctx, func() error { return runSimVertical(ctx, g, &f) })
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.usage, "usage", "", "per-pod usage file (value,timestamp_anon,container_ip; plain or gzipped)")
	fl.StringVar(&f.split, "split", "", "score only the pods whose id hashes to K modulo N (K/N, e.g. 1/2)")
	fl.StringVar(&f.plotPath, "plot", "", "write a PNG of usage against each policy's limit for a few pods")
	fl.StringSliceVar(&f.plotPods, "plot-pods", nil, "pods (id prefixes) to plot (default: the four with the most breaches under either policy)")
	fl.Float64Var(&f.minAllowed, "min-allowed", 0, "Strata's minAllowed, in the file's unit (0: none)")
	fl.Float64Var(&f.maxAllowed, "max-allowed", 0, "Strata's maxAllowed, in the file's unit (0: none)")
	fl.BoolVar(&f.explain, "explain", false, "list every breach with the reason of the limit that was in force")
	d := vertical.DefaultConfig()
	fl.DurationVar(&f.cfg.SteadyWindow, "steady-window", d.SteadyWindow, "Strata: how far back a steady task's peak is taken")
	fl.Float64Var(&f.cfg.Margin, "margin", d.Margin, "Strata: share added to a steady task's peak")
	fl.Float64Var(&f.cfg.RiseWeight, "rise-weight", d.RiseWeight, "Strata: share of the largest recent rise added to the limit")
	fl.Float64Var(&f.cfg.BurstThreshold, "burst-threshold", d.BurstThreshold, "Strata: burstiness (jump as a share of the peak) from which a task is bursty")
	fl.Float64Var(&f.cfg.BurstWeight, "burst-weight", d.BurstWeight, "Strata: a bursty task's margin per unit of burstiness")
	fl.Float64Var(&f.cfg.MaxMargin, "max-margin", d.MaxMargin, "Strata: the largest margin of a bursty task (1: twice its peak)")
	fl.StringVar(&f.progress, "progress", "auto", "progress on stderr: auto, bar, plain or none")
	addOutputFlag(cmd, g)
	return cmd
}

func runSimVertical(ctx context.Context, g *globals, f *simVerticalFlags) error {
	if f.usage == "" {
		return failf("--usage: the usage file is required (e.g. ../shared/traces/genai/pod_memory_util_anon.csv.gz)")
	}
	split, err := parseSplit(f.split)
	if err != nil {
		return err
	}
	series, err := trace.LoadUsageSeries(f.usage)
	if err != nil {
		return failf("--usage: %v", err)
	}
	var kept []trace.UsageSeries
	for _, s := range series {
		if split.keep(s.Pod) {
			kept = append(kept, s)
		}
	}
	if len(sizing.Scored(kept)) == 0 {
		return failf("--usage: no pod with at least %d samples to score (of %d pods)", sizing.MinSamples, len(kept))
	}
	cfg := f.cfg
	cfg.MinAllowed, cfg.MaxAllowed = f.minAllowed, f.maxAllowed
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return failf("%v", err)
	}
	bar, err := simProgress(g, f.progress)
	if err != nil {
		return err
	}
	keep := func(string) bool { return f.plotPath != "" }
	var results []*sizing.Result
	for _, p := range []sizing.Policy{sizing.Strata{Config: cfg}, sizing.Baseline{}} {
		r, err := sizing.Replay(ctx, p, kept, sizing.Options{KeepPods: keep, Progress: bar.func_(p.Name(), "pods")})
		bar.done()
		if err != nil {
			return failf("simulate %s: %v", p.Name(), err)
		}
		results = append(results, r)
	}
	if f.plotPath != "" {
		if err := writeFile(f.plotPath, func(w io.Writer) error { return plotVertical(w, results, f.plotPods) }); err != nil {
			return err
		}
	}
	rows := make([]sizing.Row, len(results))
	for k, r := range results {
		rows[k] = r.Row
	}
	if g.structured() {
		return g.printData(rows)
	}
	fmt.Fprintf(g.stdout, "vertical sizing of %d pods (%d with at least %d samples scored; first quarter of each is warm-up)\n",
		len(kept), rows[0].Pods, sizing.MinSamples)
	tb := newTable(g.stdout, "POLICY", "PODS", "SLACK", "PODS BREACHING", "BREACH SAMPLES")
	for _, r := range rows {
		tb.row(r.Policy, fmt.Sprint(r.Pods), pct(r.Slack), fmt.Sprint(r.PodsBreaching), fmt.Sprint(r.BreachSamples))
	}
	if err := tb.flush(); err != nil {
		return err
	}
	if f.explain {
		for _, r := range results {
			fmt.Fprintf(g.stdout, "\n%s: %d pod(s) breached\n", r.Row.Policy, r.Row.PodsBreaching)
			for _, pb := range r.Breaching {
				for _, b := range pb.Breaches {
					fmt.Fprintf(g.stdout, "  %s at %d: usage %.4g over limit %.4g", short12(pb.Pod), b.Time, b.Usage, b.Limit)
					if b.Reason != "" {
						fmt.Fprintf(g.stdout, " (%s)", b.Reason)
					}
					fmt.Fprintln(g.stdout)
				}
			}
		}
	}
	return nil
}

// plotVertical stacks one chart per chosen pod.
func plotVertical(w io.Writer, results []*sizing.Result, want []string) error {
	byPod := map[string][]sizing.PodResult{}
	var pods []string
	for _, r := range results {
		for _, p := range r.Pods {
			if _, ok := byPod[p.Pod]; !ok {
				pods = append(pods, p.Pod)
			}
			byPod[p.Pod] = append(byPod[p.Pod], p)
		}
	}
	var chosen []string
	if len(want) > 0 {
		for _, prefix := range want {
			n := 0
			for _, p := range pods {
				if len(p) >= len(prefix) && p[:len(prefix)] == prefix {
					chosen, n = append(chosen, p), n+1
				}
			}
			if n == 0 {
				return fmt.Errorf("--plot-pods: no scored pod starts with %q", prefix)
			}
		}
	} else {
		breaches := func(p string) int {
			n := 0
			for _, r := range byPod[p] {
				n += r.Breaches
			}
			return n
		}
		sort.SliceStable(pods, func(i, j int) bool { return breaches(pods[i]) > breaches(pods[j]) })
		chosen = pods[:min(4, len(pods))]
	}
	plots := make([]*sim.Plot, 0, len(chosen))
	for _, p := range chosen {
		plots = append(plots, sizing.PodPlot(p, byPod[p]...))
	}
	return sim.WritePNGStack(w, plots...)
}

func short12(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}
