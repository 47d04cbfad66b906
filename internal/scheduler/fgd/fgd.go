package fgd

import (
	"hash/fnv"
	"math"

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
)

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
// share, the GPU that earns it (among candidates when given).
func (s *scorer) best(req *scheduler.Request, n scheduler.NodeView, candidates []int) (float64, int) {
	model := ""
	if len(n.Node.GPUs) > 0 {
		model = n.Node.GPUs[0].Model
	}
	d := &s.cfg.Target
	before := d.FragOf(model, n.Free.CPUMilli, n.GPUFree)
	cpuAfter := n.Free.CPUMilli - req.Resources.CPUMilli
	gpus := append(s.scratch[:0], n.GPUFree...)
	s.scratch = gpus
	switch want := req.Resources; {
	case want.GPUMilli > 0:
		bestStep, bestGPU := -1.0, -1
		for g := range gpus {
			if candidates != nil && !contains(candidates, g) {
				continue
			}
			if gpus[g] < want.GPUMilli || (candidates == nil && !req.AcceptsGPUModel(n.Node.GPUs[g].Model)) {
				continue
			}
			gpus[g] -= want.GPUMilli
			step := frag.Score(before - d.FragOf(model, cpuAfter, gpus))
			gpus[g] += want.GPUMilli
			if step > bestStep {
				bestStep, bestGPU = step, g
			}
		}
		return max(bestStep, 0), bestGPU
	case want.GPUs > 0:
		taken := int64(0)
		for g := range gpus {
			if taken < want.GPUs && gpus[g] == 1000 && req.AcceptsGPUModel(n.Node.GPUs[g].Model) {
				gpus[g] = 0
				taken++
			}
		}
	}
	return frag.Score(before - d.FragOf(model, cpuAfter, gpus)), -1
}

// cpuKey is FGD+'s second key, in [-1, 1], higher better: a replica without
// GPUs prefers the node with the least idle GPU (CPU there serves nothing
// else); a GPU replica prefers where it most reduces the node's imbalance
// |free CPU − r × free GPU|.
func (s *scorer) cpuKey(req *scheduler.Request, n scheduler.NodeView) float64 {
	var idle int64
	for _, f := range n.GPUFree {
		idle += f
	}
	gpuWant := req.Resources.GPUs*1000 + req.Resources.GPUMilli
	if gpuWant == 0 {
		return -float64(idle) / float64(max(s.cfg.MaxGPUMilli, 1))
	}
	r := s.cfg.CPUPerGPU
	before := math.Abs(float64(n.Free.CPUMilli) - r*float64(idle))
	after := math.Abs(float64(n.Free.CPUMilli-req.Resources.CPUMilli) - r*float64(idle-gpuWant))
	return (before - after) / (float64(s.cfg.MaxCPUMilli) + r*float64(s.cfg.MaxGPUMilli) + 1)
}

// rank is a node's stable place in [0, 1): a hash of its id, the same in
// every evaluation, so that ties keep going to the same nodes.
func rank(id string) float64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	return float64(h.Sum64()>>11) / (1 << 53)
}

func contains(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// FromCell builds the policy's configuration from a cell: the target is
// the shapes of its workloads' groups, weighted by replicas and cut at
// frag.DefaultCoverage; r and the maxima come from the same groups and the
// nodes. A cell without GPU work measures nothing and the policy falls back
// to its tie-breaks.
func FromCell(nodes []*api.Node, workloads []*api.Workload) *Config {
	cfg := &Config{}
	var shapes []frag.Shape
	var cpu, gpu float64
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
			if s.NumGPU > 0 {
				cpu += float64(res.CPUMilli) * s.Count
				gpu += float64(int64(s.NumGPU)*s.PerGPUMilli) * s.Count
			}
			shapes = append(shapes, s)
		}
	}
	cfg.Target = frag.FromShapes(shapes, frag.DefaultCoverage)
	cfg.CPUPerGPU = cpu / max(gpu, 1)
	models := []string{""}
	for _, n := range nodes {
		cfg.MaxCPUMilli = max(cfg.MaxCPUMilli, n.Capacity.CPUMilli)
		cfg.MaxGPUMilli = max(cfg.MaxGPUMilli, int64(len(n.GPUs))*1000)
		if len(n.GPUs) > 0 && !containsString(models, n.GPUs[0].Model) {
			models = append(models, n.GPUs[0].Model)
		}
	}
	cfg.Target.Bind(models)
	return cfg
}

// acceptable intersects the group's tasks' GPU model lists (nil: any).
func acceptable(g *api.TaskGroup) []string {
	var out []string
	restricted := false
	for _, t := range g.Tasks {
		if len(t.GPUModels) == 0 {
			continue
		}
		if !restricted {
			out, restricted = append([]string(nil), t.GPUModels...), true
			continue
		}
		kept := out[:0]
		for _, m := range out {
			if containsString(t.GPUModels, m) {
				kept = append(kept, m)
			}
		}
		out = kept
	}
	if restricted && len(out) == 0 {
		return []string{"\x00none"} // no model serves every task
	}
	return out
}

func containsString(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}
