package predictive_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/frag"
	"github.com/strata-dev/strata/internal/scheduler"
	"github.com/strata-dev/strata/internal/scheduler/fgd"
	"github.com/strata-dev/strata/internal/scheduler/predictive"
)

// cell is a minimal scheduler.State with forecasts.
type cell struct {
	nodes     []*api.Node
	allocs    []*api.Allocation
	w         *api.Workload
	forecasts map[string]api.NodeForecast
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
func (c *cell) NodeForecast(id string) (api.NodeForecast, bool) {
	f, ok := c.forecasts[id]
	return f, ok
}

var _ scheduler.ForecastReader = (*cell)(nil)

// node adds a CPU node with cpuUsed milli-CPU already allocated.
func (c *cell) node(id string, cpu, cpuUsed int64) {
	c.nodes = append(c.nodes, &api.Node{ID: id, Name: id, Status: api.NodeReady,
		Capacity: api.Resources{CPUMilli: cpu, MemoryBytes: 1 << 40}, Allocated: api.Resources{CPUMilli: cpuUsed}})
}

// place schedules one replica of a group asking cpu under the predictive
// policy and returns the node chosen and the explanation's components.
func (c *cell) place(t *testing.T, cfg *predictive.Config, priority int, atMostOnce bool, cpu int64) (string, []api.ScoreComponent) {
	t.Helper()
	c.w = &api.Workload{Name: "w", Version: 1, Priority: priority, SchedulingPolicy: api.SchedulingPolicy{Type: predictive.Name},
		Groups: []*api.TaskGroup{{Name: "g", Replicas: 1, AtMostOnce: atMostOnce, Tasks: []*api.Task{{Name: "t", Resources: api.Resources{CPUMilli: cpu}}}}}}
	plan := scheduler.Schedule(c, &api.Evaluation{ID: "e", Workload: "w"}, scheduler.Options{Seed: 1, FeasibleSample: -1,
		Policies: map[string]scheduler.Policy{predictive.Name: predictive.New(cfg)}})
	for _, as := range plan.Place {
		return as[0].NodeID, plan.Explanations[0].Chosen.Components
	}
	t.Fatalf("nothing placed: %+v", plan.Failures)
	return "", nil
}

func risk(p float64) api.NodeForecast { return api.NodeForecast{FailureRisk: p, HasFailureRisk: true} }

func TestPredictivePlacement(t *testing.T) {
	for _, tc := range []struct {
		name       string
		forecasts  map[string]api.NodeForecast
		priority   int
		atMostOnce bool
		want       string
	}{
		// Binpack alone prefers "full" (80% used) over "empty".
		{"without forecasts the base decides", nil, 500, false, "full"},
		{"a node without a forecast is not ranked on one", map[string]api.NodeForecast{"empty": risk(0.001)}, 500, false, "full"},
		{"a risky node is avoided by production work", map[string]api.NodeForecast{"full": risk(0.05), "empty": risk(0.001)}, 1000, false, "empty"},
		{"and by atMostOnce groups", map[string]api.NodeForecast{"full": risk(0.05), "empty": risk(0.001)}, 500, true, "empty"},
		{"batch work weighs the risk less than the packing", map[string]api.NodeForecast{"full": risk(0.01), "empty": risk(0.001)}, 500, false, "full"},
		{"between nodes the base scores alike the safer wins", map[string]api.NodeForecast{"full": risk(0.01), "twin": risk(0.001)}, 500, false, "twin"},
		{"best-effort work goes where the predicted peak leaves room", map[string]api.NodeForecast{
			"full":  {HasPeak: true, PeakCPUMilli: 15000},
			"empty": {HasPeak: true, PeakCPUMilli: 1000}}, 100, false, "empty"},
		{"predicted peaks do not steer other work", map[string]api.NodeForecast{
			"full":  {HasPeak: true, PeakCPUMilli: 15000},
			"empty": {HasPeak: true, PeakCPUMilli: 1000}}, 500, false, "full"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &cell{forecasts: tc.forecasts}
			c.node("empty", 16000, 0)
			c.node("full", 16000, 12800)
			if _, ok := tc.forecasts["twin"]; ok {
				c.node("twin", 16000, 12800)
			}
			cfg := &predictive.Config{}
			if tc.forecasts != nil {
				cfg.Forecasts = c
			}
			got, comps := c.place(t, cfg, tc.priority, tc.atMostOnce, 1000)
			if got != tc.want {
				t.Errorf("placed on %s, want %s (components %+v)", got, tc.want, comps)
			}
			if !slices.ContainsFunc(comps, func(c api.ScoreComponent) bool { return c.Name == api.PolicyBinpack }) {
				t.Errorf("components %+v: the base is missing", comps)
			}
		})
	}
}

// TestPredictiveOnGPUsIsFGDWithoutForecasts: with GPU work and no
// forecasts the policy places exactly as fgd, share for share.
func TestPredictiveOnGPUsIsFGDWithoutForecasts(t *testing.T) {
	cfg := &fgd.Config{Target: frag.FromShapes([]frag.Shape{{CPUMilli: 1000, NumGPU: 1, PerGPUMilli: 600, Count: 1}}, 1),
		CPUPerGPU: 1, MaxCPUMilli: 64000, MaxGPUMilli: 8000}
	cfg.Target.Bind([]string{"", "T4"})
	build := func() *cell {
		c := &cell{}
		for i, used := range [][]int64{{500, 0}, {300, 400}, {0, 0}} {
			id := fmt.Sprint("g", i)
			n := &api.Node{ID: id, Name: id, Status: api.NodeReady, Capacity: api.Resources{CPUMilli: 32000, MemoryBytes: 1 << 40}}
			for g, u := range used {
				n.GPUs = append(n.GPUs, api.GPU{ID: fmt.Sprint(g), Model: "T4", NUMA: -1})
				n.Capacity.GPUs++
				if u > 0 {
					c.allocs = append(c.allocs, &api.Allocation{ID: fmt.Sprintf("%s-%d", id, g), NodeID: id, DesiredStatus: api.DesiredRun,
						ClientStatus: api.AllocRunning, Resources: api.Resources{GPUMilli: u}, Assignment: api.Assignment{NUMANode: -1, GPUs: []string{fmt.Sprint(g)}, GPUMilli: u}})
					n.Allocated.GPUMilli += u
				}
			}
			c.nodes = append(c.nodes, n)
		}
		return c
	}
	for _, share := range []int64{200, 400, 600} {
		res := api.Resources{CPUMilli: 1000, GPUMilli: share}
		a, b := build(), build()
		pa := schedule(a, fgd.Name, fgd.New(cfg), res)
		pb := schedule(b, predictive.Name, predictive.New(&predictive.Config{GPU: cfg}), res)
		if pa.NodeID != pb.NodeID || fmt.Sprint(pa.Assignment.GPUs) != fmt.Sprint(pb.Assignment.GPUs) {
			t.Errorf("share %d: fgd places on %s %v, predictive on %s %v", share, pa.NodeID, pa.Assignment.GPUs, pb.NodeID, pb.Assignment.GPUs)
		}
	}
}

func schedule(c *cell, typ string, p scheduler.Policy, res api.Resources) *api.Allocation {
	c.w = &api.Workload{Name: "w", Version: 1, SchedulingPolicy: api.SchedulingPolicy{Type: typ},
		Groups: []*api.TaskGroup{{Name: "g", Replicas: 1, Tasks: []*api.Task{{Name: "t", Resources: res}}}}}
	plan := scheduler.Schedule(c, &api.Evaluation{ID: "e", Workload: "w"}, scheduler.Options{Seed: 1, FeasibleSample: -1,
		Policies: map[string]scheduler.Policy{typ: p}})
	for _, as := range plan.Place {
		return as[0]
	}
	return &api.Allocation{}
}
