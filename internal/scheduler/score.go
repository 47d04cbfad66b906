package scheduler

import (
	"fmt"
	"strconv"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/gpumodel"
)

// Request is what one replica of a group asks for, as scorers see it.
type Request struct {
	Workload *api.Workload
	Group    *api.TaskGroup
	// Resources is what one replica is charged (exclusive cores rounded up
	// to whole cores).
	Resources api.Resources
}

// NodeView is a feasible node as scorers see it. Every field is read-only
// and valid only during the call.
type NodeView struct {
	Node *api.Node
	// Free is what the node has left now: capacity minus allocated, plus
	// this plan's stops, minus this plan's placements so far.
	Free api.Resources
	// GPUFree is each GPU's free milli-GPU (1000 when idle, 0 when held
	// whole), indexed like Node.GPUs. It is filled only for scorers that
	// implement GPUScorer; nil otherwise.
	GPUFree []int64

	// index, when set, is the cell's NodeIndex and slot 1 + the node's
	// position in it: built-in scorers read label values from it.
	index *NodeIndex
	slot  int32
}

// ForecastReader is implemented by States that carry the cell's
// predictions about its nodes (api.NodeForecast): soft state, so a node
// may have none. Policies that use predictions take one when they are
// built (predictive.Config); the engine itself never reads it.
type ForecastReader interface {
	NodeForecast(nodeID string) (api.NodeForecast, bool)
}

// GPUScorer is implemented by scorers that read per-GPU occupancy
// (NodeView.GPUFree), such as fragmentation-aware ones. The engine then
// loads the occupancy of every node it scores, which costs more than the
// aggregate view.
type GPUScorer interface {
	Scorer
	ReadsGPUs() bool
}

// ShareChooser is implemented by scorers that pick the GPU a fractional
// request shares on the chosen node, instead of the engine's best fit.
// candidates are the GPU indexes (into Node.GPUs) of acceptable model where
// the share fits; it returns one of them. It must be pure and may not
// block.
type ShareChooser interface {
	ChooseShare(req *Request, n NodeView, candidates []int) int
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

// WeightedScorer is a Scorer with its weight in the total and the name
// explanations show for it.
type WeightedScorer struct {
	Name   string
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

// ScoreKey implements ScoreKeyer.
func (BinPack) ScoreKey(req *Request) (string, bool) { return utilisationKey(req), true }

// Spread prefers the emptiest node, spreading load and failure impact.
type Spread struct{}

// Score is one minus BinPack's.
func (Spread) Score(req *Request, n NodeView) float64 { return 1 - utilisationAfter(req, n) }

// ScoreKey implements ScoreKeyer.
func (Spread) ScoreKey(req *Request) (string, bool) { return utilisationKey(req), true }

// utilisationKey names what utilisationAfter reads of a request.
func utilisationKey(req *Request) string {
	r := &req.Resources
	return strconv.FormatInt(r.CPUMilli, 10) + " " + strconv.FormatInt(r.MemoryBytes, 10) + " " + strconv.FormatInt(r.GPUs, 10)
}

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
	_ ScoreKeyer = BinPack{}
	_ ScoreKeyer = Spread{}
	_ ScoreKeyer = (*labelScorer)(nil)
)

// policyType is the policy a workload is scheduled with: its own, else the
// cell's default, else binpack.
func policyType(w *api.Workload, opts Options) string {
	if w != nil && w.SchedulingPolicy.Type != "" {
		return w.SchedulingPolicy.Type
	}
	if opts.Cell != nil && opts.Cell.SchedulingPolicy != "" {
		return opts.Cell.SchedulingPolicy
	}
	return api.PolicyBinpack
}

// policyFor picks the workload's policy: Options.Policies first, then the
// built-ins; binpack when the type is unknown.
func policyFor(w *api.Workload, opts Options) Policy {
	typ := policyType(w, opts)
	if p, ok := opts.Policies[typ]; ok {
		return p
	}
	scorer := builtinScorer(typ)
	if !builtinNames[typ] {
		typ = api.PolicyBinpack
	}
	return func(*Request) []WeightedScorer { return []WeightedScorer{{Name: typ, Scorer: scorer, Weight: 1}} }
}

// labelScorer adds the weights of matching prefer rules and subtracts those
// of matching avoid rules, in hundredths: a weight-100 preference counts as
// much as the whole binpack range. Rules restricted to a time window count
// only while the window is open at Options.Now; a window the cell does not
// define is taken as always open.
type labelScorer struct {
	prefer, avoid []api.LabelRule
	// Matchers per rule, bound to index on first use with one.
	index   *NodeIndex
	preferM []*ruleMatcher
	avoidM  []*ruleMatcher
}

// newLabelScorer returns nil when no rule applies now.
func newLabelScorer(p api.Placement, opts Options) *labelScorer {
	s := &labelScorer{prefer: inWindow(p.Prefer, opts), avoid: inWindow(p.Avoid, opts)}
	if len(s.prefer)+len(s.avoid) == 0 {
		return nil
	}
	return s
}

// inWindow keeps the rules without a window or whose window is open now.
func inWindow(rules []api.LabelRule, opts Options) []api.LabelRule {
	out := rules[:0:0]
	for _, r := range rules {
		if windowOpen(r.Window, opts) {
			out = append(out, r)
		}
	}
	return out
}

func windowOpen(name string, opts Options) bool {
	if name == "" {
		return true
	}
	w := opts.Cell.Window(name)
	return w == nil || w.Active(opts.Now)
}

// ScoreKey implements ScoreKeyer: the rules in force (their windows
// were judged when the scorer was made).
func (s *labelScorer) ScoreKey(*Request) (string, bool) {
	return fmt.Sprintf("labels %q %q", rulesText(s.prefer), rulesText(s.avoid)), true
}

// rulesText names label rules with their weights.
func rulesText(rules []api.LabelRule) []string {
	out := make([]string, len(rules))
	for i := range rules {
		out[i] = ruleText(&rules[i]) + " " + strconv.Itoa(rules[i].Weight)
	}
	return out
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

// components names each matching rule's part of the score:
// "prefer zone=z1" +0.5, "avoid powerZone=B (peak-hours)" -0.8.
func (s *labelScorer) components(_ *Request, n NodeView) []api.ScoreComponent {
	var out []api.ScoreComponent
	add := func(kind string, r *api.LabelRule, sign float64) {
		if !matchRule(r, n.Node.Labels) {
			return
		}
		name := kind + " " + ruleText(r)
		if r.Window != "" {
			name += " (" + r.Window + ")"
		}
		out = append(out, api.ScoreComponent{Name: name, Score: sign * float64(max(r.Weight, 1)) / 100})
	}
	for i := range s.prefer {
		add("prefer", &s.prefer[i], 1)
	}
	for i := range s.avoid {
		add("avoid", &s.avoid[i], -1)
	}
	return out
}

// AcceptsGPUModel reports whether every task of the request's group accepts
// GPU model m (a task without a model list accepts any), by the rules of
// internal/gpumodel, for a GPU whose memory is not known.
func (r *Request) AcceptsGPUModel(m string) bool { return r.AcceptsGPU(&api.GPU{Model: m}) }

// AcceptsGPU reports whether every task of the request's group accepts
// the GPU: its model and memory, by the rules of internal/gpumodel.
func (r *Request) AcceptsGPU(gpu *api.GPU) bool {
	if r.Group == nil {
		return true
	}
	for _, t := range r.Group.Tasks {
		if !gpumodel.AcceptsAny(t.GPUModels, gpu.Model, gpu.MemoryBytes) {
			return false
		}
	}
	return true
}
