package frag

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/strata-dev/strata/internal/gpumodel"
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
// rule (internal/sim/policy) FGD reproduces the published figures with it.
// Pass 1 to keep every shape.
const DefaultCoverage = 0.95

// Distribution is a target workload.
type Distribution struct {
	Types []Type
	// accept[t*len(models)+m] says whether type t can use GPU model m;
	// filled by Bind.
	accept     []bool
	models     int
	modelNames []string
	// levels are the distinct per-GPU milli needs of the GPU types, and
	// level[t] indexes a type's need in it (-1 for CPU-only types): Frag
	// scans the GPUs once per level rather than once per type.
	levels []int64
	level  []int
}

// maxLevels bounds the per-level scratch Frag keeps on the stack; a workload
// with more distinct per-GPU needs takes the per-type path.
const maxLevels = 64

// Shape is a task shape of the target workload and how often it occurs.
type Shape struct {
	CPUMilli    int64
	NumGPU      int
	PerGPUMilli int64    // milli taken from each GPU; 0 for CPU-only
	Spec        []string // acceptable models, empty = any
	Count       float64  // occurrences (pods, replicas)
}

func (s *Shape) key() string {
	return fmt.Sprint(s.CPUMilli, "/", s.NumGPU, "/", s.PerGPUMilli, "/", strings.Join(s.Spec, "|"))
}

// FromShapes builds the distribution of shapes (equal shapes merged), keeping
// the most popular until they cover at least coverage of all occurrences and
// renormalizing. Shapes equally popular are taken larger first (by CPU,
// per-GPU milli, GPU count, then spec, each descending), the order the
// paper's artifact sorts them in, so the cut is deterministic. coverage <= 0
// or >= 1 keeps every shape.
func FromShapes(shapes []Shape, coverage float64) Distribution {
	merged := map[string]*Shape{}
	var keys []*Shape
	total := 0.0
	for i := range shapes {
		s := shapes[i]
		if s.Count <= 0 {
			continue
		}
		total += s.Count
		if m, ok := merged[s.key()]; ok {
			m.Count += s.Count
			continue
		}
		merged[s.key()] = &s
		keys = append(keys, &s)
	}
	slices.SortFunc(keys, func(a, b *Shape) int {
		if c := cmp.Compare(b.Count, a.Count); c != 0 {
			return c
		}
		if c := cmp.Compare(b.CPUMilli, a.CPUMilli); c != 0 {
			return c
		}
		if c := cmp.Compare(b.PerGPUMilli, a.PerGPUMilli); c != 0 {
			return c
		}
		if c := cmp.Compare(b.NumGPU, a.NumGPU); c != 0 {
			return c
		}
		return strings.Compare(strings.Join(b.Spec, "|"), strings.Join(a.Spec, "|"))
	})
	var d Distribution
	covered := 0.0
	for _, s := range keys {
		if coverage > 0 && coverage < 1 && covered >= coverage*total {
			break
		}
		covered += s.Count
		d.Types = append(d.Types, Type{CPUMilli: s.CPUMilli, NumGPU: s.NumGPU, PerGPUMilli: s.PerGPUMilli, Spec: s.Spec, Weight: s.Count})
	}
	for i := range d.Types {
		d.Types[i].Weight /= covered
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

// Bind precomputes which types accept which GPU models; models[m] is the
// model of id m in Frag ("" for nodes without GPUs). Call it once before
// Frag and before sharing the distribution between goroutines.
func (d *Distribution) Bind(models []string) {
	d.models = len(models)
	d.modelNames = slices.Clone(models)
	d.accept = make([]bool, len(d.Types)*len(models))
	for t := range d.Types {
		for m, model := range models {
			ok := model != ""
			if ok && len(d.Types[t].Spec) > 0 {
				ok = gpumodel.AcceptsAny(d.Types[t].Spec, model, 0)
			}
			d.accept[t*len(models)+m] = ok
		}
	}
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
	return d.Types[t].unusable(d.accept[t*d.models+modelID], cpuFree, gpuFree, idle)
}

// unusable is the idle GPU milli the type cannot use on a node whose model
// it accepts or not: all of it when it cannot run there at all, else the
// GPUs with less free milli than it needs.
func (ty *Type) unusable(acceptsModel bool, cpuFree int64, gpuFree []int64, idle int64) int64 {
	if ty.NumGPU == 0 || cpuFree < ty.CPUMilli || !acceptsModel {
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

// ModelID returns the id Bind gave model, or -1.
func (d *Distribution) ModelID(model string) int {
	return slices.Index(d.modelNames, model)
}

// Score turns a fragmentation decrease (milli-GPU; negative when it grows)
// into FGD's node score, as the paper's simulator computes it: the whole
// part of 100 × sigmoid(decrease / 1000). Growths within about 40 milli-GPU
// of each other score the same, and the tie rule then decides: scoring the
// exact decrease is 2 to 6 points worse on openb, because it trades the
// consolidation of the tie rule for differences of a few milli-GPU.
func Score(decrease float64) float64 {
	return float64(int64(1 / (1 + math.Exp(-decrease/1000)) * 100))
}

// BoundTo reports whether d was bound to exactly models.
func (d *Distribution) BoundTo(models []string) bool {
	return d.models == len(models) && slices.Equal(d.modelNames, models)
}

// FragOf is Frag for a node whose GPU model is given by name: the bound id
// when Bind knew the model, otherwise each type's spec is checked directly
// (a model the distribution was not bound to is never an error).
func (d *Distribution) FragOf(model string, cpuFree int64, gpuFree []int64) float64 {
	return d.NodeFrag(&Node{ModelID: d.ModelID(model), Model: model, CPUFree: cpuFree, GPUFree: gpuFree})
}
