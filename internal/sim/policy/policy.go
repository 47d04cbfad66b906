package policy

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/strata-dev/strata/internal/sim/cluster"
	simfrag "github.com/strata-dev/strata/internal/sim/frag"
	"github.com/strata-dev/strata/internal/sim/freeindex"
	"github.com/strata-dev/strata/internal/sim/trace"
)

// Scorer rates placing a pod on a node. Implementations are not safe for
// concurrent use and never block.
type Scorer interface {
	// Name is the policy's name as the paper spells it.
	Name() string
	// Score rates placing p on node, which Cluster.Fits has accepted;
	// higher is better. Scores of different pods are never compared. The
	// paper's policies return whole numbers in 0..100, as the Kubernetes
	// scoring framework they ran on does, so that near-equal nodes tie.
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

// Normalizer is implemented by scorers whose raw scores are rescaled over
// all feasible nodes of one pod before the best is taken (the Kubernetes
// NormalizeScore point). Normalize rewrites scores in place.
type Normalizer interface {
	Normalize(scores []float64)
}

// Tie-breaking rules for Options.TieBreak.
const (
	// TieRank (the default) gives every node a rank, a uniformly random
	// permutation drawn from the run's seed and fixed for the whole run,
	// and sends ties to the lowest-ranked node. It is what the paper's
	// simulator does: it prefixes every node name with its index in a
	// seeded random permutation and its scheduler keeps the
	// lexicographically smallest name among the best scores.
	TieRank = "rank"
	// TieRandom draws uniformly among the tied nodes for every pod (what
	// stock kube-scheduler does).
	TieRandom = "random"
	// TieFirst sends ties to the lowest node index (trace order).
	TieFirst = "first"
)

// Selector is a cluster.Placer that places each pod on its best-scoring
// feasible node.
type Selector struct {
	Scorer Scorer
	// Tie is the tie-breaking rule, one of TieRank, TieRandom, TieFirst.
	Tie  string
	seed uint64
	rng  *rand.Rand
	rank []int32 // per node, for TieRank; drawn on first use

	nodes  []int // scratch: feasible nodes of the current pod
	scores []float64
	// scanned says nodes and scores hold the latest Place's scan (an
	// indexed placement leaves them for Explain to compute).
	scanned bool

	index      *freeindex.Index // on cells without GPUs (indexed.go)
	indexNodes int              // cluster size the index was made for
	// noIndex makes every placement scan (the tests' reference).
	noIndex bool
}

var (
	_ cluster.Placer    = (*Selector)(nil)
	_ cluster.Explainer = (*Selector)(nil)
)

// NewSelector wraps s with TieRank tie-breaking; seed draws the ranks (and
// the choices under TieRandom).
func NewSelector(s Scorer, seed uint64) *Selector {
	return &Selector{Scorer: s, Tie: TieRank, seed: seed, rng: rand.New(rand.NewPCG(seed, 0x5eed))}
}

// ranks returns the node ranks for a cluster of n nodes.
func (sel *Selector) ranks(n int) []int32 {
	if len(sel.rank) != n {
		r := rand.New(rand.NewPCG(sel.seed, 0x7a9c))
		sel.rank = make([]int32, n)
		for i, v := range r.Perm(n) {
			sel.rank[i] = int32(v)
		}
	}
	return sel.rank
}

// Place implements cluster.Placer. Where it can (a cell without GPUs,
// indexed.go) it finds the node the scan below would choose through an
// index, without scoring every node.
func (sel *Selector) Place(c *cluster.Cluster, p *trace.Pod) (cluster.Placement, bool) {
	sel.scanned = false
	if pl, ok, handled := sel.placeIndexed(c, p); handled {
		return pl, ok
	}
	sel.scan(c, p)
	if len(sel.nodes) == 0 {
		return cluster.Placement{}, false
	}
	if nz, ok := sel.Scorer.(Normalizer); ok {
		nz.Normalize(sel.scores)
	}
	best := sel.pick(c.NumNodes())
	return cluster.PlacementFor(best, p, sel.Scorer.PickGPUs(c, best, p)), true
}

// scan scores every feasible node into nodes and scores.
func (sel *Selector) scan(c *cluster.Cluster, p *trace.Pod) {
	if pr, ok := sel.Scorer.(Preparer); ok {
		pr.Prepare(c, p)
	}
	sel.nodes, sel.scores = sel.nodes[:0], sel.scores[:0]
	for i := 0; i < c.NumNodes(); i++ {
		if c.Fits(i, p) {
			sel.nodes = append(sel.nodes, i)
			sel.scores = append(sel.scores, sel.Scorer.Score(c, i, p))
		}
	}
	sel.scanned = true
}

// Explain implements cluster.Explainer from the scores Place just computed
// (or, after an indexed placement, from a scan of the unchanged cluster):
// the chosen node's score under the policy, how many feasible nodes tied
// with it (the tie rule chose among them), and the best three others.
func (sel *Selector) Explain(c *cluster.Cluster, p *trace.Pod, pl cluster.Placement, placed bool, e *cluster.Explanation) {
	if !placed {
		return
	}
	if !sel.scanned {
		sel.scan(c, p)
		if nz, ok := sel.Scorer.(Normalizer); ok && len(sel.scores) > 0 {
			nz.Normalize(sel.scores)
		}
	}
	type scored struct {
		node  int
		score float64
	}
	var others []scored
	for k, i := range sel.nodes {
		switch s := sel.scores[k]; {
		case i == pl.Node:
			e.Score = s
			e.Components = []cluster.ScoreComponent{{Name: sel.Scorer.Name(), Score: s}}
		default:
			others = append(others, scored{i, s})
		}
	}
	for _, o := range others {
		if o.score == e.Score {
			e.Tied++
		}
	}
	if e.Tied > 0 {
		e.Tied++ // the chosen node itself
	}
	slices.SortStableFunc(others, func(a, b scored) int { return cmp.Compare(b.score, a.score) })
	for _, o := range others[:min(3, len(others))] {
		e.RunnersUp = append(e.RunnersUp, cluster.NodeScore{Node: c.Node(o.node).Name, Score: o.score})
	}
}

// pick returns the best feasible node under the tie rule.
func (sel *Selector) pick(numNodes int) int {
	var rank []int32
	if sel.Tie == TieRank || sel.Tie == "" {
		rank = sel.ranks(numNodes)
	}
	best, bestScore, ties := sel.nodes[0], sel.scores[0], 1
	for k := 1; k < len(sel.nodes); k++ {
		i, s := sel.nodes[k], sel.scores[k]
		switch {
		case s > bestScore:
			best, bestScore, ties = i, s, 1
		case s < bestScore:
		case rank != nil:
			if rank[i] < rank[best] {
				best = i
			}
		case sel.Tie == TieRandom:
			// Reservoir sampling keeps each tied node with equal probability.
			if ties++; sel.rng.IntN(ties) == 0 {
				best = i
			}
		}
	}
	return best
}

// Options configure a policy.
type Options struct {
	// Seed drives tie-breaking and the Random policy.
	Seed uint64
	// Workload is the target workload FGD measures fragmentation against,
	// usually the trace's own pods.
	Workload []trace.Pod
	// Coverage is the popularity coverage of FGD's target workload
	// (simfrag.DefaultCoverage when 0).
	Coverage float64
	// TieBreak is how exact ties between nodes are broken: TieRank (the
	// default, as the paper's simulator does), TieRandom or TieFirst.
	// Random itself always draws.
	TieBreak string
}

func (o Options) coverage() float64 {
	if o.Coverage == 0 {
		return simfrag.DefaultCoverage
	}
	return o.Coverage
}

var registry = map[string]func(Options) Scorer{
	"Random":        func(o Options) Scorer { return NewRandom(o.Seed) },
	"DotProd":       func(Options) Scorer { return DotProd{} },
	"GpuClustering": func(Options) Scorer { return &GpuClustering{} },
	"GpuPacking":    func(Options) Scorer { return GpuPacking{} },
	"BestFit":       func(Options) Scorer { return BestFit{} },
	"FGD":           func(o Options) Scorer { return NewFGD(simfrag.FromPods(o.Workload, o.coverage())) },
	FGDPlusName:     func(o Options) Scorer { return NewFGDPlus(simfrag.FromPods(o.Workload, o.coverage()), o.Workload) },
}

// Names lists the policies: the paper's, in its order, then Strata's own.
func Names() []string {
	return []string{"Random", "DotProd", "GpuClustering", "GpuPacking", "BestFit", "FGD", FGDPlusName}
}

// PaperNames lists the policies of the paper's table, in its order.
func PaperNames() []string { return Names()[:6] }

// New builds the named policy as a Placer.
func New(name string, o Options) (*Selector, error) {
	mk, ok := registry[name]
	if !ok {
		return nil, fmt.Errorf("unknown policy %q (have %v)", name, Names())
	}
	sel := NewSelector(mk(o), o.Seed)
	switch o.TieBreak {
	case "", TieRank:
	case TieRandom, TieFirst:
		sel.Tie = o.TieBreak
	default:
		return nil, fmt.Errorf("unknown tie-break %q (want %q, %q or %q)", o.TieBreak, TieRank, TieRandom, TieFirst)
	}
	if name == "Random" {
		sel.Tie = TieRandom // every node scores the same: the draw is the policy
	}
	return sel, nil
}

// Known reports whether name is a policy.
func Known(name string) bool { return slices.Contains(Names(), name) }
