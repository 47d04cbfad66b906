package policy

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/strata-dev/strata/internal/sim/cluster"
	"github.com/strata-dev/strata/internal/sim/frag"
	"github.com/strata-dev/strata/internal/sim/trace"
)

// Scorer rates placing a pod on a node. Implementations are not safe for
// concurrent use and never block.
type Scorer interface {
	// Name is the policy's name as the paper spells it.
	Name() string
	// Score rates placing p on node, which Cluster.Fits has accepted;
	// higher is better. Scores of different pods are never compared.
	Score(c *cluster.Cluster, node int, p *trace.Pod) float64
	// PickGPUs chooses the GPUs p takes on the chosen node (0 for a pod
	// without GPUs). It is called once per placement, after Score.
	PickGPUs(c *cluster.Cluster, node int, p *trace.Pod) cluster.GPUSet
}

// Preparer is implemented by scorers that do per-pod work once before the
// nodes are scored (the Kubernetes PreScore point).
type Preparer interface {
	Prepare(c *cluster.Cluster, p *trace.Pod)
}

// Selector is a cluster.Placer that places each pod on its best-scoring
// feasible node.
type Selector struct {
	Scorer Scorer
	// FirstOnTie makes exact ties go to the lowest-indexed node instead of
	// a uniformly random one.
	FirstOnTie bool
	rng        *rand.Rand
}

var _ cluster.Placer = (*Selector)(nil)

// NewSelector wraps s; seed drives the tie-breaking.
func NewSelector(s Scorer, seed uint64) *Selector {
	return &Selector{Scorer: s, rng: rand.New(rand.NewPCG(seed, 0x5eed))}
}

// Place implements cluster.Placer.
func (sel *Selector) Place(c *cluster.Cluster, p *trace.Pod) (cluster.Placement, bool) {
	if pr, ok := sel.Scorer.(Preparer); ok {
		pr.Prepare(c, p)
	}
	best, ties := -1, 0
	var bestScore float64
	for i := 0; i < c.NumNodes(); i++ {
		if !c.Fits(i, p) {
			continue
		}
		s := sel.Scorer.Score(c, i, p)
		switch {
		case best < 0 || s > bestScore:
			best, bestScore, ties = i, s, 1
		case s == bestScore:
			// Reservoir sampling keeps each tied node with equal probability.
			ties++
			if !sel.FirstOnTie && sel.rng.IntN(ties) == 0 {
				best = i
			}
		}
	}
	if best < 0 {
		return cluster.Placement{}, false
	}
	return cluster.PlacementFor(best, p, sel.Scorer.PickGPUs(c, best, p)), true
}

// Options configure a policy.
type Options struct {
	// Seed drives tie-breaking and the Random policy.
	Seed uint64
	// Workload is the target workload FGD measures fragmentation against,
	// usually the trace's own pods.
	Workload []trace.Pod
	// Coverage is the popularity coverage of FGD's target workload
	// (frag.DefaultCoverage when 0).
	Coverage float64
	// TieBreak is how exact ties between nodes are broken: TieRandom (the
	// default, as the Kubernetes framework does) or TieFirst (lowest node
	// index, a first-fit that consolidates). Random itself always draws.
	TieBreak string
}

// Tie-breaking rules for Options.TieBreak.
const (
	TieRandom = "random"
	TieFirst  = "first"
)

var registry = map[string]func(Options) Scorer{
	"Random":        func(o Options) Scorer { return NewRandom(o.Seed) },
	"DotProd":       func(Options) Scorer { return DotProd{} },
	"GpuClustering": func(Options) Scorer { return GpuClustering{} },
	"GpuPacking":    func(Options) Scorer { return GpuPacking{} },
	"BestFit":       func(Options) Scorer { return BestFit{} },
	"FGD": func(o Options) Scorer {
		cov := o.Coverage
		if cov == 0 {
			cov = frag.DefaultCoverage
		}
		return NewFGD(frag.FromPods(o.Workload, cov))
	},
}

// Names lists the policies in the paper's order.
func Names() []string {
	return []string{"Random", "DotProd", "GpuClustering", "GpuPacking", "BestFit", "FGD"}
}

// New builds the named policy as a Placer.
func New(name string, o Options) (*Selector, error) {
	mk, ok := registry[name]
	if !ok {
		return nil, fmt.Errorf("unknown policy %q (have %v)", name, Names())
	}
	sel := NewSelector(mk(o), o.Seed)
	switch o.TieBreak {
	case "", TieRandom:
	case TieFirst:
		sel.FirstOnTie = name != "Random"
	default:
		return nil, fmt.Errorf("unknown tie-break %q (want %q or %q)", o.TieBreak, TieRandom, TieFirst)
	}
	return sel, nil
}

// Known reports whether name is a policy.
func Known(name string) bool { return slices.Contains(Names(), name) }
