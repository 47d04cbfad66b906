package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/strata-dev/strata/internal/autopilot/gpushare"
	"github.com/strata-dev/strata/internal/sim/policy"
	"github.com/strata-dev/strata/internal/sim/sharefit"
	"github.com/strata-dev/strata/internal/sim/trace"
)

type simGPUShareFlags struct {
	duty       string
	nodes      string
	pods       string
	seed       int64
	podsPerGPU float64
	policy     string
	sizes      bool
	progress   string
}

func newSimGPUShareCmd(g *globals) *cobra.Command {
	var f simGPUShareFlags
	cmd := &cobra.Command{
		Use:   "gpu-share --duty FILE --nodes NODE_CSV --pods POD_CSV",
		Short: "Size GPU shares from duty cycles and count how many more such pods fit on a cluster",
		Long: `Recommend a GPU share (milli-GPU) for every pod of a duty-cycle file (the GenAI
trace's pod_gpu_duty_cycle_anon.csv: the share of time, in %, each pod's whole GPU
was busy) — the 95th percentile of its duty cycle plus 20 %, rounded up to 50
milli, between 100 and 1000 — then fill a cluster (an openb node list) with
such pods twice, each time the same seeded draw of them, submitted one by one
and never deleted, placed by FGD+: once asking for a whole GPU each, once asking
for the recommended share. Pods take their CPU and memory from the pods of
--pods that ask for exactly one whole GPU (pod k from the k-th of them).

The answer is the pods placed each way. The recommendation sizes the GPU's
time only: the CPU and memory the pods ask for are unchanged, and whether
their models fit in one GPU's memory is not modelled.`,
		Example: `  strata sim gpu-share --duty ../shared/traces/genai/pod_gpu_duty_cycle_anon.csv.gz \
      --nodes ../shared/traces/openb/openb_node_list_gpu_node.csv \
      --pods ../shared/traces/openb/openb_pod_list_default.csv
  strata sim gpu-share --duty D.csv.gz --nodes N.csv --pods P.csv -o json --sizes`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(g); err != nil {
				return err
			}
			ctx := cmd.Context()
			return interruptible(ctx, func() error { return runSimGPUShare(ctx, g, &f) })
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.duty, "duty", "", "per-pod GPU duty cycle file, in % (pod_gpu_duty_cycle_anon.csv format)")
	fl.StringVar(&f.nodes, "nodes", "", "cluster: an openb node list")
	fl.StringVar(&f.pods, "pods", "", "openb pod list whose single whole-GPU pods give the CPU and memory")
	fl.Int64Var(&f.seed, "seed", 42, "seed of the draw and of the placement")
	fl.Float64Var(&f.podsPerGPU, "pods-per-gpu", 3, "pods submitted per GPU of the cluster")
	fl.StringVar(&f.policy, "policy", policy.FGDPlusName, "placement policy (a `strata sim` policy)")
	fl.BoolVar(&f.sizes, "sizes", false, "list every pod's recommended share and why")
	fl.StringVar(&f.progress, "progress", "auto", "progress on stderr: auto, bar, plain or none")
	addOutputFlag(cmd, g)
	return cmd
}

func runSimGPUShare(ctx context.Context, g *globals, f *simGPUShareFlags) error {
	if f.duty == "" || f.nodes == "" || f.pods == "" {
		return failf("--duty, --nodes and --pods are all required")
	}
	if f.podsPerGPU <= 0 {
		return failf("--pods-per-gpu: must be positive, got %v", f.podsPerGPU)
	}
	duty, err := trace.LoadUsageSeries(f.duty)
	if err != nil {
		return failf("--duty: %v", err)
	}
	nodes, err := trace.LoadOpenbNodes(f.nodes)
	if err != nil {
		return failf("--nodes: %v", err)
	}
	pods, err := trace.LoadOpenbPods(f.pods)
	if err != nil {
		return failf("--pods: %v", err)
	}
	bar, err := simProgress(g, f.progress)
	if err != nil {
		return err
	}
	res, err := sharefit.Experiment(ctx, sharefit.Options{Nodes: nodes, Templates: pods, Duty: duty, Share: gpushare.DefaultConfig(),
		PodsPerGPU: f.podsPerGPU, Seed: f.seed, Policy: f.policy, Progress: bar.func_("gpu-share", "pods")})
	bar.done()
	if err != nil {
		return failf("%v", err)
	}
	if !f.sizes {
		res.Sizes = nil
	}
	if g.structured() {
		return g.printData(res)
	}
	fmt.Fprintf(g.stdout, "%d pods sized (%d left out: too few samples); median p95 duty cycle %.1f%%, median share %d milli\n",
		res.Pods, res.Skipped, res.MedianDutyP, res.MedianMilli)
	fmt.Fprintf(g.stdout, "%d such pods submitted to %d nodes (%d GPUs), placed by %s:\n", res.Submitted, len(nodes), res.GPUs, res.Policy)
	tb := newTable(g.stdout, "SIZING", "PLACED", "FAILED", "GPU ALLOC %", "CPU ALLOC %", "MEM ALLOC %")
	for _, r := range []sharefit.Run{res.Whole, res.Recommended} {
		tb.row(r.Sizing, fmt.Sprint(r.Placed), fmt.Sprint(r.Failed), ff1(r.GPUAlloc), ff1(r.CPUAlloc), ff1(r.MemAlloc))
	}
	if err := tb.flush(); err != nil {
		return err
	}
	fmt.Fprintf(g.stdout, "\nsized by the recommendation, %d more pods fit (+%.0f%%)\n", res.MorePods, 100*res.MoreFraction)
	for _, s := range res.Sizes {
		fmt.Fprintf(g.stdout, "  %s  %4d milli  %s\n", short12(s.Pod), s.Milli, s.Reason)
	}
	return nil
}
