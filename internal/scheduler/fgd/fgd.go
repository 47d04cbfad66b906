package fgd

import (
	"fmt"
	"hash/fnv"
	"slices"
	"sync/atomic"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/frag"
	"github.com/strata-dev/strata/internal/scheduler"
)

// Name is the policy type this package implements.
const Name = api.PolicyFGD

// Config is what the policy measures against. Build it with FromCell (the
// server, the bench) or by hand (the simulator, from a trace).
type Config struct {
	// Target is the workload fragmentation is measured against, bound to
	// the cell's GPU models.
	Target frag.Distribution
	// CPUPerGPU is r in the CPU-aware key: the milli-CPU the target's GPU
	// tasks ask for per milli-GPU.
	CPUPerGPU float64
	// MaxCPUMilli and MaxGPUMilli are the largest node's capacities; they
	// keep the CPU-aware key within its band.
	MaxCPUMilli, MaxGPUMilli int64
	// id names the configuration in score cache keys, drawn on first use
	// (configIDs): a Config must not change once its policy scores.
	id atomic.Uint64
	// PaperTies drops the CPU-aware key: ties go straight to the node rank,
	// as in the paper's FGD.
	PaperTies bool
}

// Score bands: the FGD step (0..100) fills [0, 1] in steps of 0.01; the
// CPU-aware key moves a score by at most ±keyBand, under half a step; the
// node rank by less than rankBand.
const (
	keyBand  = 0.004
	rankBand = 1e-6
)

// New returns the policy for cfg.
func New(cfg *Config) scheduler.Policy {
	return func(*scheduler.Request) []scheduler.WeightedScorer {
		return []scheduler.WeightedScorer{{Name: Name, Scorer: &scorer{cfg: cfg}, Weight: 1}}
	}
}

// scorer is one group's view of the policy; not safe for concurrent use
// (a Policy makes one per group and plan).
type scorer struct {
	cfg     *Config
	scratch []int64
}

var (
	_ scheduler.GPUScorer    = (*scorer)(nil)
	_ scheduler.ShareChooser = (*scorer)(nil)
	_ scheduler.ScoreKeyer   = (*scorer)(nil)
)

// configIDs numbers configurations for score cache keys: an id is never
// reused, even when a later Config takes an earlier one's memory.
var configIDs atomic.Uint64

// ScoreKey implements scheduler.ScoreKeyer: the configuration, one
// replica's ask and the GPU models every task accepts.
func (s *scorer) ScoreKey(req *scheduler.Request) (string, bool) {
	id := s.cfg.id.Load()
	for id == 0 {
		s.cfg.id.CompareAndSwap(0, configIDs.Add(1))
		id = s.cfg.id.Load()
	}
	var lists [][]string
	if req.Group != nil {
		for _, t := range req.Group.Tasks {
			lists = append(lists, t.GPUModels)
		}
	}
	r := &req.Resources
	return fmt.Sprintf("fgd %d %d %d %d %q", id, r.CPUMilli, r.GPUs, r.GPUMilli, lists), true
}

func (*scorer) ReadsGPUs() bool { return true }

// Score implements scheduler.Scorer.
func (s *scorer) Score(req *scheduler.Request, n scheduler.NodeView) float64 {
	step, _ := s.best(req, n, nil)
	total := step / 100
	if !s.cfg.PaperTies {
		total += keyBand * s.cpuKey(req, n)
	}
	return total + rankBand*(1-rank(n.Node.ID))
}

// ChooseShare implements scheduler.ShareChooser: the GPU where the share
// fragments least, the lowest index among equals.
func (s *scorer) ChooseShare(req *scheduler.Request, n scheduler.NodeView, candidates []int) int {
	_, g := s.best(req, n, candidates)
	return g
}

// best is FGD's whole score for one more replica on node n and, for a
// share, the GPU that earns it (among candidates when given, else among
// the GPUs of a model the group accepts): frag.Step.
func (s *scorer) best(req *scheduler.Request, n scheduler.NodeView, candidates []int) (float64, int) {
	model := ""
	if len(n.Node.GPUs) > 0 {
		model = n.Node.GPUs[0].Model
	}
	d := &s.cfg.Target
	fn := frag.Node{ModelID: d.ModelID(model), Model: model, CPUFree: n.Free.CPUMilli, GPUFree: n.GPUFree}
	if cap(s.scratch) < len(n.GPUFree) {
		s.scratch = make([]int64, len(n.GPUFree))
	}
	eligible := func(g int) bool { return req.AcceptsGPU(&n.Node.GPUs[g]) }
	if candidates != nil {
		eligible = func(g int) bool { return slices.Contains(candidates, g) }
	}
	return d.Step(&fn, d.NodeFrag(&fn), want(req), eligible, s.scratch)
}

// cpuKey is FGD+'s second key (frag.CPUKey) against the cell's largest
// node.
func (s *scorer) cpuKey(req *scheduler.Request, n scheduler.NodeView) float64 {
	var idle int64
	for _, f := range n.GPUFree {
		idle += f
	}
	return frag.CPUKey(n.Free.CPUMilli, idle, want(req), s.cfg.CPUPerGPU, s.cfg.MaxCPUMilli, s.cfg.MaxGPUMilli)
}

// want is one replica's ask in the measure's terms.
func want(req *scheduler.Request) frag.Want {
	return frag.Want{CPUMilli: req.Resources.CPUMilli, GPUs: int(req.Resources.GPUs), ShareMilli: req.Resources.GPUMilli}
}

// rank is a node's stable place in [0, 1): a hash of its id, the same in
// every evaluation, so that ties keep going to the same nodes.
func rank(id string) float64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	return float64(h.Sum64()>>11) / (1 << 53)
}

// FromCell builds the policy's configuration from a cell: the target is
// the shapes of its workloads' groups, weighted by replicas (NewConfig);
// the models and the largest node are the nodes'. A cell without GPU work
// measures nothing and the policy falls back to its tie-breaks.
func FromCell(nodes []*api.Node, workloads []*api.Workload) *Config {
	var shapes []frag.Shape
	for _, w := range workloads {
		if w.Stopped {
			continue
		}
		for _, g := range w.Groups {
			res := g.Resources()
			s := frag.Shape{CPUMilli: res.CPUMilli, Count: float64(g.Replicas), Spec: acceptable(g)}
			switch {
			case res.GPUMilli > 0:
				s.NumGPU, s.PerGPUMilli = 1, res.GPUMilli
			case res.GPUs > 0:
				s.NumGPU, s.PerGPUMilli = int(res.GPUs), 1000
			}
			shapes = append(shapes, s)
		}
	}
	models := []string{""}
	var maxCPU, maxGPU int64
	for _, n := range nodes {
		maxCPU = max(maxCPU, n.Capacity.CPUMilli)
		maxGPU = max(maxGPU, int64(len(n.GPUs))*1000)
		if len(n.GPUs) > 0 && !slices.Contains(models, n.GPUs[0].Model) {
			models = append(models, n.GPUs[0].Model)
		}
	}
	return NewConfig(shapes, models, maxCPU, maxGPU)
}

// NewConfig is the configuration for a target workload of shapes (cut at
// frag.DefaultCoverage, as the paper's artifact cuts it), on a cell whose
// nodes have the GPU models models ("" for nodes without GPUs) and whose
// largest node has maxCPU milli-CPU and maxGPU milli-GPU. r of the
// CPU-aware key comes from the same shapes (frag.CPUPerGPU).
func NewConfig(shapes []frag.Shape, models []string, maxCPU, maxGPU int64) *Config {
	cfg := &Config{
		Target:      frag.FromShapes(shapes, frag.DefaultCoverage),
		CPUPerGPU:   frag.CPUPerGPU(shapes),
		MaxCPUMilli: maxCPU,
		MaxGPUMilli: maxGPU,
	}
	cfg.Target.Bind(models)
	return cfg
}

// acceptable is the GPU models every task of g accepts (nil: any), in the
// measure's terms.
func acceptable(g *api.TaskGroup) []string {
	models, anyModel := scheduler.AcceptedGPUModels(g)
	if !anyModel && len(models) == 0 {
		return []string{"\x00none"} // no model serves every task
	}
	return models
}
