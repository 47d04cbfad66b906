package policy

import (
	"math/rand/v2"

	"github.com/strata-dev/strata/internal/sim/cluster"
	"github.com/strata-dev/strata/internal/sim/trace"
)

// maxScore is the top of the Kubernetes node-score range the paper's
// policies score in (0..100).
const maxScore = 100

// Random places a pod on a uniformly random feasible node (every node scores
// the same and the Selector draws among them) and a sharing pod on a
// uniformly random GPU that fits.
type Random struct{ rng *rand.Rand }

// NewRandom returns a Random policy seeded with seed.
func NewRandom(seed uint64) *Random { return &Random{rng: rand.New(rand.NewPCG(seed, 0xa11))} }

func (*Random) Name() string { return "Random" }

// CPUOnly implements CPUOnlyScorer: every node scores the same.
func (*Random) CPUOnly(*cluster.Cluster, *trace.Pod) func(int64) float64 { return nil }
func (*Random) Score(*cluster.Cluster, int, *trace.Pod) float64          { return 0 }

func (r *Random) PickGPUs(c *cluster.Cluster, node int, p *trace.Pod) cluster.GPUSet {
	n := c.Node(node)
	if !p.IsShare() {
		return n.DefaultGPUs(p)
	}
	pick, seen := -1, 0
	for g, f := range n.GPUFree {
		if f >= p.GPUMilli {
			if seen++; r.rng.IntN(seen) == 0 {
				pick = g
			}
		}
	}
	return cluster.GPUSet(0).With(pick)
}

// DotProd (Tetris-style alignment, as in the paper's artifact) prefers the
// node whose free (CPU, GPU) vector has the smallest dot product with the
// pod's request, both divided by the largest node of the cell: the score is
// the whole part of 100 × (1 − dot/2). GPUs: best fit.
type DotProd struct{}

func (DotProd) Name() string { return "DotProd" }

func (DotProd) Score(c *cluster.Cluster, node int, p *trace.Pod) float64 {
	n := c.Node(node)
	return dotProdScore(n.CPUFree, n.GPUFreeTotal(), p, c.MaxNode())
}

func dotProdScore(cpuFree, gpuFree int64, p *trace.Pod, m cluster.Resources) float64 {
	dot := ratio(cpuFree, m.CPUMilli)*ratio(p.CPUMilli, m.CPUMilli) +
		ratio(gpuFree, m.GPUMilli)*ratio(p.GPURequestMilli(), m.GPUMilli)
	return whole(maxScore * (1 - dot/2))
}

// CPUOnly implements CPUOnlyScorer: without GPUs the dot product is the
// CPU term, which grows with free CPU.
func (DotProd) CPUOnly(c *cluster.Cluster, p *trace.Pod) func(int64) float64 {
	m := c.MaxNode()
	return func(cpuFree int64) float64 { return dotProdScore(cpuFree, 0, p, m) }
}

func (DotProd) PickGPUs(c *cluster.Cluster, node int, p *trace.Pod) cluster.GPUSet {
	return c.Node(node).DefaultGPUs(p)
}

// BestFit prefers the node left with the least free resources after the
// pod. The raw score is the whole part of 100 × (1 − what remains), what
// remains being the weighted sum (CPU and GPU, ½ each) of the node's free
// CPU and GPU after the pod, divided by the largest node; the raw scores of
// the feasible nodes are then stretched to 0..100 in whole numbers
// (Normalize). GPUs: best fit.
type BestFit struct{}

func (BestFit) Name() string { return "BestFit" }

func (BestFit) Score(c *cluster.Cluster, node int, p *trace.Pod) float64 {
	n := c.Node(node)
	return bestFitScore(n.CPUFree, n.GPUFreeTotal(), p, c.MaxNode())
}

func bestFitScore(cpuFree, gpuFree int64, p *trace.Pod, m cluster.Resources) float64 {
	left := ratio(cpuFree-p.CPUMilli, m.CPUMilli)*0.5 + ratio(gpuFree-p.GPURequestMilli(), m.GPUMilli)*0.5
	return whole((1 - left) * maxScore)
}

// CPUOnly implements CPUOnlyScorer: without GPUs what remains is the CPU
// left after the pod.
func (BestFit) CPUOnly(c *cluster.Cluster, p *trace.Pod) func(int64) float64 {
	m := c.MaxNode()
	return func(cpuFree int64) float64 { return bestFitScore(cpuFree, 0, p, m) }
}

// Normalize maps the raw scores linearly onto 0..100 (lowest to 0, highest
// to 100), rounding down; all 0 when they are all equal.
func (BestFit) Normalize(scores []float64) { normalize(scores) }

func (BestFit) PickGPUs(c *cluster.Cluster, node int, p *trace.Pod) cluster.GPUSet {
	return c.Node(node).DefaultGPUs(p)
}

// normalize is the min-max rescaling to whole numbers in 0..100 shared by
// the scorers that need it.
func normalize(scores []float64) {
	lo, hi := scores[0], scores[0]
	for _, s := range scores {
		lo, hi = min(lo, s), max(hi, s)
	}
	for i, s := range scores {
		if hi == lo {
			scores[i] = 0
		} else {
			scores[i] = float64(int64(s-lo) * maxScore / int64(hi-lo))
		}
	}
}

// GpuPacking prefers, in order: (1) a node where the pod fits on GPUs that
// are already partly used, scored 100 − (free tenths of those GPUs), at
// least 50; (2) a node already in use whose fully free GPUs the pod must
// take, 50 − their number, at least 33; (3) an idle node, 33 − its GPU
// count. CPU-only pods score 0 everywhere: the tie rule places them. GPUs:
// best fit.
type GpuPacking struct{}

func (GpuPacking) Name() string { return "GpuPacking" }

func (GpuPacking) Score(c *cluster.Cluster, node int, p *trace.Pod) float64 {
	if p.NumGPU == 0 {
		return 0
	}
	n := c.Node(node)
	free := n.FullyFreeGPUs()
	if free == len(n.GPUFree) { // (3) an idle node
		return float64(max(maxScore/3-free, free))
	}
	gpus := n.DefaultGPUs(p)
	fresh, tenths := 0, int64(0)
	for g, f := range n.GPUFree {
		if gpus.Has(g) {
			if f == trace.MilliPerGPU {
				fresh++
			}
			tenths += f * 100 / trace.MilliPerGPU
		}
	}
	if fresh > 0 { // (2) must open fully free GPUs on a used node
		return float64(max(maxScore/2-fresh, maxScore/3))
	}
	return float64(max(maxScore-tenths/10, maxScore/2)) // (1) shared GPUs only
}

// CPUOnly implements CPUOnlyScorer: a pod without GPUs scores 0 everywhere.
func (GpuPacking) CPUOnly(*cluster.Cluster, *trace.Pod) func(int64) float64 { return nil }

func (GpuPacking) PickGPUs(c *cluster.Cluster, node int, p *trace.Pod) cluster.GPUSet {
	return c.Node(node).DefaultGPUs(p)
}

// GpuClustering keeps GPU pods of the same kind (sharing, or k whole GPUs)
// together. Its score is a tier plus up to 25 points for a fuller node
// (25 × used share of the largest node's GPUs, rounded down): 75 for a node
// hosting only pods of the pod's kind, 50 for a node hosting that kind
// among others, 25 for a node without GPU pods, 0 for a node with other
// kinds only. CPU-only pods score 0 everywhere. GPUs: best fit.
type GpuClustering struct {
	kinds []kindMask // per node, cached by Version
}

type kindMask struct {
	version uint64 // node Version + 1
	mask    uint64
}

func (*GpuClustering) Name() string { return "GpuClustering" }

// kindBit is the bit of a GPU pod's kind: bit 0 for sharing pods, bit k for
// k whole GPUs (k ≥ 63 share bit 63).
func kindBit(p *trace.Pod) uint64 {
	if p.IsShare() {
		return 1
	}
	return 1 << uint(min(p.NumGPU, 63))
}

func (gc *GpuClustering) kindsOn(c *cluster.Cluster, node int) uint64 {
	if len(gc.kinds) != c.NumNodes() {
		gc.kinds = make([]kindMask, c.NumNodes())
	}
	n, k := c.Node(node), &gc.kinds[node]
	if k.version != n.Version+1 {
		k.version, k.mask = n.Version+1, 0
		for _, id := range n.Allocs {
			if q := c.Alloc(id).Pod; q.NumGPU > 0 {
				k.mask |= kindBit(q)
			}
		}
	}
	return k.mask
}

func (gc *GpuClustering) Score(c *cluster.Cluster, node int, p *trace.Pod) float64 {
	if p.NumGPU == 0 {
		return 0
	}
	n, want := c.Node(node), kindBit(p)
	mask := gc.kindsOn(c, node)
	fill := maxScore / 4 * (c.MaxNode().GPUMilli - n.GPUFreeTotal()) / max(c.MaxNode().GPUMilli, 1)
	var tier int64
	switch {
	case mask == want:
		tier = 3
	case mask&want != 0:
		tier = 2
	case mask == 0:
		tier = 1
	}
	return float64(tier*maxScore/4 + fill)
}

// CPUOnly implements CPUOnlyScorer: a pod without GPUs scores 0 everywhere.
func (*GpuClustering) CPUOnly(*cluster.Cluster, *trace.Pod) func(int64) float64 { return nil }

func (*GpuClustering) PickGPUs(c *cluster.Cluster, node int, p *trace.Pod) cluster.GPUSet {
	return c.Node(node).DefaultGPUs(p)
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// whole truncates a score toward zero, as converting it to an integer
// score does.
func whole(x float64) float64 { return float64(int64(x)) }

var (
	_ Scorer     = (*Random)(nil)
	_ Scorer     = DotProd{}
	_ Scorer     = BestFit{}
	_ Normalizer = BestFit{}
	_ Scorer     = GpuPacking{}
	_ Scorer     = (*GpuClustering)(nil)

	_ CPUOnlyScorer = (*Random)(nil)
	_ CPUOnlyScorer = DotProd{}
	_ CPUOnlyScorer = BestFit{}
	_ CPUOnlyScorer = GpuPacking{}
	_ CPUOnlyScorer = (*GpuClustering)(nil)
)
