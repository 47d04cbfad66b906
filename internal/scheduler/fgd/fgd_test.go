package fgd_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/frag"
	"github.com/strata-dev/strata/internal/scheduler"
	"github.com/strata-dev/strata/internal/scheduler/fgd"
)

// cell is a minimal scheduler.State: nodes and running allocations.
type cell struct {
	nodes  []*api.Node
	allocs []*api.Allocation
	w      *api.Workload
}

func (c *cell) Nodes() []*api.Node { return c.nodes }
func (c *cell) Node(id string) *api.Node {
	for _, n := range c.nodes {
		if n.ID == id {
			return n
		}
	}
	return nil
}
func (c *cell) Workload(_, name string) *api.Workload          { return c.w }
func (c *cell) AllocsByWorkload(_, _ string) []*api.Allocation { return nil }
func (c *cell) Index() uint64                                  { return 1 }
func (c *cell) AllocsByNode(id string) (out []*api.Allocation) {
	for _, a := range c.allocs {
		if a.NodeID == id {
			out = append(out, a)
		}
	}
	return out
}

// gpuNode has n GPUs of model and cpu milli-CPU; used[g] milli of GPU g
// is already shared out.
func (c *cell) gpuNode(id, model string, cpu int64, used ...int64) {
	n := &api.Node{ID: id, Name: id, Status: api.NodeReady, Capacity: api.Resources{CPUMilli: cpu, MemoryBytes: 1 << 40}}
	for g, u := range used {
		n.GPUs = append(n.GPUs, api.GPU{ID: fmt.Sprint(g), Model: model, NUMA: -1})
		n.Capacity.GPUs++
		if u > 0 {
			c.allocs = append(c.allocs, &api.Allocation{ID: fmt.Sprintf("%s-%d", id, g), NodeID: id, DesiredStatus: api.DesiredRun,
				ClientStatus: api.AllocRunning, Resources: api.Resources{GPUMilli: u}, Assignment: api.Assignment{NUMANode: -1, GPUs: []string{fmt.Sprint(g)}, GPUMilli: u}})
			n.Allocated.GPUMilli += u
		}
	}
	c.nodes = append(c.nodes, n)
}

func (c *cell) place(t *testing.T, cfg *fgd.Config, res api.Resources) *api.Allocation {
	t.Helper()
	c.w = &api.Workload{Name: "w", Version: 1, SchedulingPolicy: api.SchedulingPolicy{Type: fgd.Name},
		Groups: []*api.TaskGroup{{Name: "g", Replicas: 1, Tasks: []*api.Task{{Name: "t", Resources: res}}}}}
	plan := scheduler.Schedule(c, &api.Evaluation{ID: "e", Workload: "w"}, scheduler.Options{Seed: 1, FeasibleSample: -1,
		Policies: map[string]scheduler.Policy{fgd.Name: fgd.New(cfg)}})
	for _, as := range plan.Place {
		if e := plan.Explanations[0]; e.Chosen == nil || e.Chosen.Components[0].Name != fgd.Name {
			t.Fatalf("explanation does not name fgd: %+v", e)
		}
		return as[0]
	}
	t.Fatalf("nothing placed: %+v", plan.Failures)
	return nil
}

// target is a workload of 600-milli shares only.
func target(models ...string) *fgd.Config {
	cfg := &fgd.Config{Target: frag.FromShapes([]frag.Shape{{CPUMilli: 1000, NumGPU: 1, PerGPUMilli: 600, Count: 1}}, 1),
		CPUPerGPU: 1, MaxCPUMilli: 64000, MaxGPUMilli: 8000}
	cfg.Target.Bind(append([]string{""}, models...))
	return cfg
}

func TestShareGoesWhereItFragmentsLeast(t *testing.T) {
	// Target: 600-milli shares. A 400-milli share on a fresh GPU of node
	// a would leave 600 (usable); on b's half-used GPU (500 free) it
	// leaves 100, and b's fully free GPU stays whole; on a's GPU 1 (600
	// free) it would break a usable 600 into 200: the best is b, GPU 1.
	c := &cell{}
	c.gpuNode("a", "T4", 32000, 0, 400)
	c.gpuNode("b", "T4", 32000, 0, 500)
	a := c.place(t, target("T4"), api.Resources{CPUMilli: 1000, GPUMilli: 400})
	if a.NodeID != "b" || !slices.Equal(a.Assignment.GPUs, []string{"1"}) {
		t.Fatalf("placed on %s GPUs %v, want b [1]", a.NodeID, a.Assignment.GPUs)
	}
}

func TestCPUOnlyTaskGoesWhereGPUsAreTaken(t *testing.T) {
	// Equal FGD steps (nothing fragments more than before); the CPU-aware
	// key sends the CPU task to the node with the least idle GPU.
	c := &cell{}
	c.gpuNode("idle", "T4", 32000, 0, 0)
	c.gpuNode("busy", "T4", 32000, 1000, 1000)
	if a := c.place(t, target("T4"), api.Resources{CPUMilli: 4000}); a.NodeID != "busy" {
		t.Fatalf("placed on %s, want busy", a.NodeID)
	}
}

func TestFromCell(t *testing.T) {
	mk := func(name string, replicas int, res api.Resources, models ...string) *api.Workload {
		return &api.Workload{Name: name, Groups: []*api.TaskGroup{{Name: "g", Replicas: replicas, Tasks: []*api.Task{{Name: "t", Resources: res, GPUModels: models}}}}}
	}
	stopped := mk("old", 100, api.Resources{CPUMilli: 1})
	stopped.Stopped = true
	cfg := fgd.FromCell(
		[]*api.Node{{ID: "n", Capacity: api.Resources{CPUMilli: 96000}, GPUs: []api.GPU{{ID: "0", Model: "A100"}, {ID: "1", Model: "A100"}}}, {ID: "c", Capacity: api.Resources{CPUMilli: 8000}}},
		[]*api.Workload{mk("train", 6, api.Resources{CPUMilli: 8000, GPUs: 2}, "A100"), mk("infer", 3, api.Resources{CPUMilli: 2000, GPUMilli: 500}), mk("web", 1, api.Resources{CPUMilli: 500}), stopped},
	)
	var got []string
	for _, ty := range cfg.Target.Types {
		got = append(got, fmt.Sprintf("%d/%dx%d %s %.2f", ty.CPUMilli, ty.NumGPU, ty.PerGPUMilli, strings.Join(ty.Spec, "|"), ty.Weight))
	}
	// 95% of 10 replicas: train (6) and infer (3) cover 90%, web takes it past 95%.
	if want := "[8000/2x1000 A100 0.60 2000/1x500  0.30 500/0x0  0.10]"; fmt.Sprint(got) != want {
		t.Fatalf("target = %v, want %v", got, want)
	}
	if cfg.MaxCPUMilli != 96000 || cfg.MaxGPUMilli != 2000 || cfg.Target.ModelID("A100") < 0 {
		t.Fatalf("config %+v", cfg)
	}
	// r = (6×8000 + 3×2000) / (6×2000 + 3×500)
	if r := 54000.0 / 13500; cfg.CPUPerGPU != r {
		t.Fatalf("CPUPerGPU = %v, want %v", cfg.CPUPerGPU, r)
	}
}

// TestScoreKeysNameWhatTheScoreReads holds the fgd scorer to the
// scheduler.ScoreKeyer contract: requests with equal keys score a node
// alike, and two configurations never share a key.
func TestScoreKeysNameWhatTheScoreReads(t *testing.T) {
	cfgA, cfgB := target("A100", "V100"), target("A100", "V100")
	node := &api.Node{ID: "n1", Capacity: api.Resources{CPUMilli: 32000, GPUs: 2},
		GPUs: []api.GPU{{ID: "0", Model: "A100"}, {ID: "1", Model: "V100"}}}
	view := scheduler.NodeView{Node: node, Free: api.Resources{CPUMilli: 20000, GPUs: 1}, GPUFree: []int64{1000, 400}}
	var reqs []*scheduler.Request
	for _, models := range [][]string{nil, {"A100"}, {"V100"}} {
		for _, res := range []api.Resources{{CPUMilli: 4000, GPUs: 1}, {CPUMilli: 8000, GPUs: 1}, {CPUMilli: 4000, GPUMilli: 300}, {CPUMilli: 4000, MemoryBytes: 1 << 30, GPUMilli: 300}} {
			tg := &api.TaskGroup{Name: "g", Tasks: []*api.Task{{Name: "t", GPUModels: models}}}
			reqs = append(reqs, &scheduler.Request{Group: tg, Resources: res})
		}
	}
	keyOf := func(cfg *fgd.Config, r *scheduler.Request) (string, float64) {
		s := fgd.New(cfg)(r)[0].Scorer
		k, ok := s.(scheduler.ScoreKeyer).ScoreKey(r)
		if !ok {
			t.Fatalf("no key for %+v", r.Resources)
		}
		return k, s.Score(r, view)
	}
	seen := map[string]float64{}
	for _, cfg := range []*fgd.Config{cfgA, cfgB} {
		for _, r := range reqs {
			k, score := keyOf(cfg, r)
			if prev, ok := seen[k]; ok && prev != score {
				t.Fatalf("key %q scores %v and %v", k, prev, score)
			}
			seen[k] = score
		}
	}
	if ka, _ := keyOf(cfgA, reqs[0]); func() bool { kb, _ := keyOf(cfgB, reqs[0]); return ka == kb }() {
		t.Fatalf("two configurations share key %q", ka)
	}
}
