package scheduler

import "github.com/strata-dev/strata/api"

// Request is what one replica of a group asks for, as scorers see it.
type Request struct {
	Workload *api.Workload
	Group    *api.TaskGroup
	// Resources is what one replica is charged (exclusive cores rounded up
	// to whole cores).
	Resources api.Resources
}

// NodeView is a feasible node as scorers see it. Both fields are read-only.
type NodeView struct {
	Node *api.Node
	// Free is what the node has left now: capacity minus allocated, plus
	// this plan's stops, minus this plan's placements so far.
	Free api.Resources

	// index, when set, is the cell's NodeIndex and slot 1 + the node's
	// position in it: built-in scorers read label values from it.
	index *NodeIndex
	slot  int32
}

// Scorer rates how good a feasible node is for one more replica; higher is
// better. The built-in policy scorers stay within [0, 1] so that weights
// compare across scorers.
// Score must be a pure function of its arguments and safe for concurrent
// use: the engine caches a node's score and recomputes it only after a
// placement changes that node's Free, and parallel workers share scorers.
// It must not block.
type Scorer interface {
	Score(req *Request, node NodeView) float64
}

// WeightedScorer is a Scorer with its weight in the total.
type WeightedScorer struct {
	Scorer Scorer
	Weight float64
}

// Policy returns the scorers for one group; SchedulingPolicy.Type selects
// it. Other packages add policies (fgd, dot-product, random with a seed of
// their own) through Options.Policies.
type Policy func(req *Request) []WeightedScorer

// BinPack prefers the node that will be fullest after the placement (best
// fit), keeping whole nodes free for large requests.
type BinPack struct{}

// Score is the mean utilisation after placement over cpu, memory and, for
// GPU requests, GPUs.
func (BinPack) Score(req *Request, n NodeView) float64 { return utilisationAfter(req, n) }

// Spread prefers the emptiest node, spreading load and failure impact.
type Spread struct{}

// Score is one minus BinPack's.
func (Spread) Score(req *Request, n NodeView) float64 { return 1 - utilisationAfter(req, n) }

func utilisationAfter(req *Request, n NodeView) float64 {
	capacity, want := &n.Node.Capacity, &req.Resources
	sum, dims := 0.0, 0
	if capacity.CPUMilli > 0 {
		sum += float64(capacity.CPUMilli-n.Free.CPUMilli+want.CPUMilli) / float64(capacity.CPUMilli)
		dims++
	}
	if capacity.MemoryBytes > 0 {
		sum += float64(capacity.MemoryBytes-n.Free.MemoryBytes+want.MemoryBytes) / float64(capacity.MemoryBytes)
		dims++
	}
	if want.GPUs > 0 && capacity.GPUs > 0 {
		sum += float64(capacity.GPUs-n.Free.GPUs+want.GPUs) / float64(capacity.GPUs)
		dims++
	}
	if dims == 0 {
		return 0
	}
	return sum / float64(dims)
}

var (
	_ Scorer = BinPack{}
	_ Scorer = Spread{}
	_ Scorer = (*labelScorer)(nil)
)

// policyFor picks the workload's policy: Options.Policies first, then the
// built-ins; binpack when the type is empty or unknown.
func policyFor(w *api.Workload, extra map[string]Policy) Policy {
	typ := ""
	if w != nil {
		typ = w.SchedulingPolicy.Type
	}
	if p, ok := extra[typ]; ok {
		return p
	}
	scorer := builtinScorer(typ)
	return func(*Request) []WeightedScorer { return []WeightedScorer{{Scorer: scorer, Weight: 1}} }
}

// labelScorer adds the weights of matching prefer rules and subtracts those
// of matching avoid rules, in hundredths: a weight-100 preference counts as
// much as the whole binpack range.
type labelScorer struct {
	prefer, avoid []api.LabelRule
	// Matchers per rule, bound to index on first use with one.
	index   *NodeIndex
	preferM []*ruleMatcher
	avoidM  []*ruleMatcher
}

func newLabelScorer(p api.Placement) *labelScorer {
	return &labelScorer{prefer: p.Prefer, avoid: p.Avoid}
}

func (s *labelScorer) Score(_ *Request, n NodeView) float64 {
	if n.index != nil && n.slot > 0 {
		return s.indexed(n.index, int(n.slot-1))
	}
	total := 0
	for i := range s.prefer {
		if matchRule(&s.prefer[i], n.Node.Labels) {
			total += max(s.prefer[i].Weight, 1)
		}
	}
	for i := range s.avoid {
		if matchRule(&s.avoid[i], n.Node.Labels) {
			total -= max(s.avoid[i].Weight, 1)
		}
	}
	return float64(total) / 100
}

// indexed is Score for node i of index, by matchers.
func (s *labelScorer) indexed(index *NodeIndex, i int) float64 {
	if s.index != index {
		s.index = index
		s.preferM, s.avoidM = s.preferM[:0], s.avoidM[:0]
		for j := range s.prefer {
			s.preferM = append(s.preferM, bindRule(&s.prefer[j], index.column(s.prefer[j].Key)))
		}
		for j := range s.avoid {
			s.avoidM = append(s.avoidM, bindRule(&s.avoid[j], index.column(s.avoid[j].Key)))
		}
	}
	total := 0
	for j, m := range s.preferM {
		if m.match(i) {
			total += max(s.prefer[j].Weight, 1)
		}
	}
	for j, m := range s.avoidM {
		if m.match(i) {
			total -= max(s.avoid[j].Weight, 1)
		}
	}
	return float64(total) / 100
}
