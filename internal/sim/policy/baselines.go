package policy

import (
	"math/rand/v2"

	"github.com/strata-dev/strata/internal/sim/cluster"
	"github.com/strata-dev/strata/internal/sim/trace"
)

// Random places a pod on a uniformly random feasible node (every node scores
// the same, so the Selector's tie-breaking does the choosing) and a sharing
// pod on a uniformly random GPU that fits.
type Random struct{ rng *rand.Rand }

// NewRandom returns a Random policy seeded with seed.
func NewRandom(seed uint64) *Random { return &Random{rng: rand.New(rand.NewPCG(seed, 0xa11))} }

func (*Random) Name() string                                    { return "Random" }
func (*Random) Score(*cluster.Cluster, int, *trace.Pod) float64 { return 0 }

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
// pod's request, both normalized by the largest node of the cell.
type DotProd struct{}

func (DotProd) Name() string { return "DotProd" }

func (DotProd) Score(c *cluster.Cluster, node int, p *trace.Pod) float64 {
	n, m := c.Node(node), c.MaxNode()
	cpu := ratio(n.CPUFree, m.CPUMilli) * ratio(p.CPUMilli, m.CPUMilli)
	gpu := ratio(n.GPUFreeTotal(), m.GPUMilli) * ratio(p.GPURequestMilli(), m.GPUMilli)
	return -(cpu + gpu) / 2
}

func (DotProd) PickGPUs(c *cluster.Cluster, node int, p *trace.Pod) cluster.GPUSet {
	return c.Node(node).DefaultGPUs(p)
}

// BestFit prefers the node left with the least free resources after the
// pod: the score is minus the weighted sum (CPU and GPU, ½ each) of what
// remains, normalized by the largest node.
type BestFit struct{}

func (BestFit) Name() string { return "BestFit" }

func (BestFit) Score(c *cluster.Cluster, node int, p *trace.Pod) float64 {
	n, m := c.Node(node), c.MaxNode()
	left := 0.5*ratio(n.CPUFree-p.CPUMilli, m.CPUMilli) + 0.5*ratio(n.GPUFreeTotal()-p.GPURequestMilli(), m.GPUMilli)
	return -left
}

func (BestFit) PickGPUs(c *cluster.Cluster, node int, p *trace.Pod) cluster.GPUSet {
	return c.Node(node).DefaultGPUs(p)
}

// GpuPacking prefers, in order: (1) a node where the pod fits on GPUs that
// are already partly used, the fuller the better; (2) a node already in use
// whose fully free GPUs the pod must take, the fewer the better; (3) an idle
// node, the fewer GPUs the better. CPU-only pods score equally everywhere.
type GpuPacking struct{}

func (GpuPacking) Name() string { return "GpuPacking" }

func (GpuPacking) Score(c *cluster.Cluster, node int, p *trace.Pod) float64 {
	if p.NumGPU == 0 {
		return 0
	}
	n := c.Node(node)
	free := n.FullyFreeGPUs()
	if free == len(n.GPUFree) { // tier 3: an idle node
		return 1 - float64(free)/float64(trace.MaxGPUsPerNode+1)
	}
	gpus := n.DefaultGPUs(p)
	fresh, freeOnUsed := 0, int64(0)
	for g, f := range n.GPUFree {
		if gpus.Has(g) {
			if f == trace.MilliPerGPU {
				fresh++
			}
			freeOnUsed += f
		}
	}
	if fresh > 0 { // tier 2: must open fully free GPUs on a used node
		return 2 - float64(fresh)/float64(trace.MaxGPUsPerNode+1)
	}
	// tier 1: shared GPUs only; less free milli on them is better.
	return 3 - float64(freeOnUsed)/float64(int64(trace.MaxGPUsPerNode+1)*trace.MilliPerGPU)
}

func (GpuPacking) PickGPUs(c *cluster.Cluster, node int, p *trace.Pod) cluster.GPUSet {
	return c.Node(node).DefaultGPUs(p)
}

// GpuClustering keeps GPU pods of the same kind (sharing, or k whole GPUs)
// together. It prefers, in order: a node hosting only pods of the pod's kind;
// a node hosting that kind among others; an idle node; any other node. Within
// a tier, the node with less free GPU milli wins. CPU-only pods score equally
// everywhere.
type GpuClustering struct{}

func (GpuClustering) Name() string { return "GpuClustering" }

// kind classes a GPU pod: -1 for sharing pods, else its GPU count.
func kind(p *trace.Pod) int {
	if p.IsShare() {
		return -1
	}
	return p.NumGPU
}

func (GpuClustering) Score(c *cluster.Cluster, node int, p *trace.Pod) float64 {
	if p.NumGPU == 0 {
		return 0
	}
	n, want := c.Node(node), kind(p)
	same, other := false, false
	for _, id := range n.Allocs {
		q := c.Alloc(id).Pod
		if q.NumGPU == 0 {
			continue
		}
		if kind(q) == want {
			same = true
		} else {
			other = true
		}
	}
	var tier float64
	switch {
	case same && !other:
		tier = 3
	case same:
		tier = 2
	case !other:
		tier = 1
	}
	return tier + 1 - ratio(n.GPUFreeTotal(), c.MaxNode().GPUMilli)
}

func (GpuClustering) PickGPUs(c *cluster.Cluster, node int, p *trace.Pod) cluster.GPUSet {
	return c.Node(node).DefaultGPUs(p)
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

var (
	_ Scorer = (*Random)(nil)
	_ Scorer = DotProd{}
	_ Scorer = BestFit{}
	_ Scorer = GpuPacking{}
	_ Scorer = GpuClustering{}
)
