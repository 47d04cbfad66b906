package frag

import (
	"github.com/strata-dev/strata/internal/frag"
	"github.com/strata-dev/strata/internal/sim/cluster"
	"github.com/strata-dev/strata/internal/sim/trace"
)

// DefaultCoverage is frag.DefaultCoverage, the artifact's 95% cut.
const DefaultCoverage = frag.DefaultCoverage

// FromPods builds the distribution of the pods' shapes (Shapes), cut at
// coverage as frag.FromShapes does.
func FromPods(pods []trace.Pod, coverage float64) frag.Distribution {
	return frag.FromShapes(Shapes(pods), coverage)
}

// Shapes is one shape per pod (CPU, GPU count, per-GPU milli, GPU spec;
// memory is not part of the measure), in trace order.
func Shapes(pods []trace.Pod) []frag.Shape {
	shapes := make([]frag.Shape, len(pods))
	for i := range pods {
		p := &pods[i]
		shapes[i] = frag.Shape{CPUMilli: p.CPUMilli, NumGPU: p.NumGPU, PerGPUMilli: p.PerGPUMilli(), Spec: p.GPUSpec, Count: 1}
	}
	return shapes
}

// WantOf is what pod p asks in the measure's terms.
func WantOf(p *trace.Pod) frag.Want {
	want := frag.Want{CPUMilli: p.CPUMilli}
	if p.IsShare() {
		want.ShareMilli = p.GPUMilli
	} else if p.NumGPU > 0 {
		want.GPUs = p.NumGPU
	}
	return want
}

// NodeFrag is node n's fragmentation in milli-GPU under d, bound to c's
// models on first use.
func NodeFrag(d *frag.Distribution, c *cluster.Cluster, n *cluster.NodeState) float64 {
	if !d.BoundTo(c.Models()) {
		d.Bind(c.Models())
	}
	return d.Frag(n.ModelID, n.CPUFree, n.GPUFree)
}

// Tracker keeps the cluster-wide fragmentation current by recomputing only
// the nodes whose Version changed since the last Update.
type Tracker struct {
	d        *frag.Distribution
	perNode  []float64
	versions []uint64
	seen     []bool
	total    float64
}

// NewTracker tracks c's fragmentation under d.
func NewTracker(d *frag.Distribution, c *cluster.Cluster) *Tracker {
	n := c.NumNodes()
	return &Tracker{d: d, perNode: make([]float64, n), versions: make([]uint64, n), seen: make([]bool, n)}
}

// Update refreshes the changed nodes and returns the fragmentation of the
// nodes that are up and their idle GPU milli.
func (tr *Tracker) Update(c *cluster.Cluster) (fragMilli float64, idleMilli int64) {
	for i := range tr.perNode {
		n := c.Node(i)
		if tr.seen[i] && tr.versions[i] == n.Version {
			if n.Up {
				idleMilli += n.GPUFreeTotal()
			}
			continue
		}
		tr.total -= tr.perNode[i]
		tr.perNode[i] = 0
		if n.Up {
			tr.perNode[i] = NodeFrag(tr.d, c, n)
			idleMilli += n.GPUFreeTotal()
		}
		tr.total += tr.perNode[i]
		tr.versions[i], tr.seen[i] = n.Version, true
	}
	return tr.total, idleMilli
}
