package frag

import (
	"cmp"
	"slices"
	"strings"

	"github.com/strata-dev/strata/internal/sim/cluster"
	"github.com/strata-dev/strata/internal/sim/trace"
)

// Type is one task type of the target workload.
type Type struct {
	CPUMilli    int64
	NumGPU      int
	PerGPUMilli int64    // milli taken from each GPU; 0 for CPU-only
	Spec        []string // acceptable models, empty = any
	Weight      float64  // popularity, the weights of a Distribution sum to 1
}

// DefaultCoverage is the popularity cut of the paper's artifact: the most
// popular pod shapes that together make up 95% of the trace's pods form the
// target workload (its typical-pods setting podPopularityThreshold: 95,
// pkg/utils/frag.go GetTypicalPods). On openb default that cut drops every
// multi-GPU shape, each rare on its own; with the paper's scoring and tie
// rule (package policy) FGD reproduces the published figures with it.
// Pass 1 to keep every shape.
const DefaultCoverage = 0.95

// Distribution is a target workload.
type Distribution struct {
	Types []Type
	// accept[t*len(models)+m] says whether type t can use GPU model m;
	// filled by Bind.
	accept []bool
	models int
	// levels are the distinct per-GPU milli needs of the GPU types, and
	// level[t] indexes a type's need in it (-1 for CPU-only types): Frag
	// scans the GPUs once per level rather than once per type.
	levels []int64
	level  []int
}

// maxLevels bounds the per-level scratch Frag keeps on the stack; a workload
// with more distinct per-GPU needs takes the per-type path.
const maxLevels = 64

type shapeKey struct {
	cpu   int64
	num   int
	milli int64
	spec  string
}

// FromPods builds the distribution of pod shapes (CPU, GPU count, per-GPU
// milli, GPU spec; memory is not part of the fragmentation measure) in pods,
// keeping the most popular shapes until they cover at least coverage of all
// pods and renormalizing. Shapes equally popular are taken larger first (by
// CPU, per-GPU milli, GPU count, then spec, each descending), the order the
// paper's artifact sorts them in, so the cut is deterministic. coverage <= 0
// or >= 1 keeps every shape.
func FromPods(pods []trace.Pod, coverage float64) Distribution {
	counts := map[shapeKey]int{}
	specs := map[string][]string{}
	for i := range pods {
		p := &pods[i]
		k := shapeKey{cpu: p.CPUMilli, num: p.NumGPU, milli: p.PerGPUMilli(), spec: strings.Join(p.GPUSpec, "|")}
		counts[k]++
		specs[k.spec] = p.GPUSpec
	}
	keys := make([]shapeKey, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b shapeKey) int {
		if c := cmp.Compare(counts[b], counts[a]); c != 0 {
			return c
		}
		if c := cmp.Compare(b.cpu, a.cpu); c != 0 {
			return c
		}
		if c := cmp.Compare(b.milli, a.milli); c != 0 {
			return c
		}
		if c := cmp.Compare(b.num, a.num); c != 0 {
			return c
		}
		return strings.Compare(b.spec, a.spec)
	})
	total := float64(len(pods))
	var d Distribution
	covered := 0
	for _, k := range keys {
		if coverage > 0 && coverage < 1 && float64(covered) >= coverage*total {
			break
		}
		covered += counts[k]
		d.Types = append(d.Types, Type{CPUMilli: k.cpu, NumGPU: k.num, PerGPUMilli: k.milli, Spec: specs[k.spec], Weight: float64(counts[k])})
	}
	for i := range d.Types {
		d.Types[i].Weight /= float64(covered)
	}
	d.indexLevels()
	return d
}

func (d *Distribution) indexLevels() {
	d.levels, d.level = nil, make([]int, len(d.Types))
	for t := range d.Types {
		d.level[t] = -1
		if d.Types[t].NumGPU == 0 {
			continue
		}
		k := slices.Index(d.levels, d.Types[t].PerGPUMilli)
		if k < 0 {
			k = len(d.levels)
			d.levels = append(d.levels, d.Types[t].PerGPUMilli)
		}
		d.level[t] = k
	}
}

// Bind precomputes which types accept which GPU models; call it once with
// Cluster.Models before NodeFrag (NodeFrag binds lazily otherwise).
func (d *Distribution) Bind(models []string) {
	d.models = len(models)
	d.accept = make([]bool, len(d.Types)*len(models))
	for t := range d.Types {
		for m, model := range models {
			ok := model != ""
			if ok && len(d.Types[t].Spec) > 0 {
				ok = slices.Contains(d.Types[t].Spec, model)
			}
			d.accept[t*len(models)+m] = ok
		}
	}
}

// NodeFrag is node n's fragmentation in milli-GPU.
func (d *Distribution) NodeFrag(c *cluster.Cluster, n *cluster.NodeState) float64 {
	if d.models != len(c.Models()) {
		d.Bind(c.Models())
	}
	return d.Frag(n.ModelID, n.CPUFree, n.GPUFree)
}

// Frag is the fragmentation of a node of GPU model modelID (as bound) with
// cpuFree milli-CPU and the given free milli per GPU.
func (d *Distribution) Frag(modelID int, cpuFree int64, gpuFree []int64) float64 {
	var idle int64
	for _, f := range gpuFree {
		idle += f
	}
	if idle == 0 {
		return 0
	}
	if len(d.level) != len(d.Types) {
		d.indexLevels()
	}
	var frag float64
	if len(d.levels) > maxLevels {
		for t := range d.Types {
			frag += d.Types[t].Weight * float64(d.typeFrag(t, modelID, cpuFree, gpuFree, idle))
		}
		return frag
	}
	var usable [maxLevels]int
	var below [maxLevels]int64
	for k, need := range d.levels {
		for _, f := range gpuFree {
			if f >= need {
				usable[k]++
			} else {
				below[k] += f
			}
		}
	}
	for t := range d.Types {
		ty := &d.Types[t]
		unusable := idle
		if k := d.level[t]; k >= 0 && cpuFree >= ty.CPUMilli && usable[k] >= ty.NumGPU && d.accept[t*d.models+modelID] {
			unusable = below[k]
		}
		frag += ty.Weight * float64(unusable)
	}
	return frag
}

// typeFrag is the idle GPU milli task type t cannot use on the node.
func (d *Distribution) typeFrag(t, modelID int, cpuFree int64, gpuFree []int64, idle int64) int64 {
	ty := &d.Types[t]
	if ty.NumGPU == 0 || cpuFree < ty.CPUMilli || !d.accept[t*d.models+modelID] {
		return idle
	}
	var below int64
	usable := 0
	for _, f := range gpuFree {
		if f >= ty.PerGPUMilli {
			usable++
		} else {
			below += f
		}
	}
	if usable < ty.NumGPU {
		return idle
	}
	return below
}

// Tracker keeps the cluster-wide fragmentation current by recomputing only
// the nodes whose Version changed since the last Update.
type Tracker struct {
	d        *Distribution
	perNode  []float64
	versions []uint64
	seen     []bool
	total    float64
}

// NewTracker tracks c's fragmentation under d.
func NewTracker(d *Distribution, c *cluster.Cluster) *Tracker {
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
			tr.perNode[i] = tr.d.NodeFrag(c, n)
			idleMilli += n.GPUFreeTotal()
		}
		tr.total += tr.perNode[i]
		tr.versions[i], tr.seen[i] = n.Version, true
	}
	return tr.total, idleMilli
}
