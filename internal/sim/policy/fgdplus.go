package policy

import (
	"github.com/strata-dev/strata/internal/frag"
	"github.com/strata-dev/strata/internal/sim/cluster"
	simfrag "github.com/strata-dev/strata/internal/sim/frag"
	"github.com/strata-dev/strata/internal/sim/trace"
)

// FGDPlusName is the name of Strata's own policy.
const FGDPlusName = "FGD+"

// FGDPlus is FGD with CPU-aware tie-breaking. Its first key is FGD's score
// exactly (same target workload, same whole 0..100 score, same GPU within
// the node); only among the nodes FGD scores equal — which are many, since
// the score is coarse — does a second key decide, before the node rank:
//
//   - a pod without GPUs goes to the node with the least idle GPU: CPU on a
//     node whose GPUs are taken can serve nothing but CPU pods, while CPU
//     next to idle GPUs is what GPU pods will need;
//   - a GPU pod goes where it best evens out the node's CPU against its GPUs:
//     the node's imbalance is |free CPU − r × free GPU|, r the CPU per GPU
//     the target workload's GPU pods ask for on average, and the key is how
//     much the pod reduces it. A CPU-hungry GPU pod lands next to spare CPU,
//     a CPU-light one where CPU is short, so that neither GPUs without CPU
//     nor CPU without GPUs is left behind.
//
// FGD's fragmentation counts a node's GPUs as lost to a task that lacks CPU
// there, but only for the next task; the second key looks after the CPU–GPU
// mix that decides what later tasks can use. Everything is derived from the
// cluster and the target workload; nothing is tuned per trace and nothing
// about future arrivals is known beyond the workload's shape distribution
// FGD already uses.
type FGDPlus struct {
	*FGD
	cpuPerGPU float64 // r: milli-CPU per milli-GPU of the workload's GPU pods
}

// NewFGDPlus returns FGD+ measuring fragmentation against d, with r taken
// from the GPU pods of workload.
func NewFGDPlus(d frag.Distribution, workload []trace.Pod) *FGDPlus {
	return &FGDPlus{FGD: NewFGD(d), cpuPerGPU: frag.CPUPerGPU(simfrag.Shapes(workload))}
}

func (*FGDPlus) Name() string { return FGDPlusName }

// fgdPlusStep separates FGD's whole scores in the combined key; the second
// key stays within ±1.
const fgdPlusStep = 4

// Score is FGD's score × 4 plus the second key in [−1, 1].
func (f *FGDPlus) Score(c *cluster.Cluster, node int, p *trace.Pod) float64 {
	return fgdPlusStep*f.FGD.Score(c, node, p) + f.secondKey(c, node, p)
}

// secondKey is frag.CPUKey against the cluster's largest node.
func (f *FGDPlus) secondKey(c *cluster.Cluster, node int, p *trace.Pod) float64 {
	n, m := c.Node(node), c.MaxNode()
	return frag.CPUKey(n.CPUFree, n.GPUFreeTotal(), simfrag.WantOf(p), f.cpuPerGPU, m.CPUMilli, m.GPUMilli)
}

// CPUOnly implements CPUOnlyScorer: FGD's score is constant without GPUs,
// and so is the second key of a pod without GPUs (no node has idle GPU).
func (*FGDPlus) CPUOnly(*cluster.Cluster, *trace.Pod) func(int64) float64 { return nil }

var (
	_ CPUOnlyScorer = (*FGDPlus)(nil)
	_ Scorer        = (*FGDPlus)(nil)
	_ Preparer      = (*FGDPlus)(nil)
)
