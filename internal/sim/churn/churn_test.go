package churn

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/strata-dev/strata/internal/rebalance"
	"github.com/strata-dev/strata/internal/sim/cluster"
	"github.com/strata-dev/strata/internal/sim/trace"
)

// gpuCell is n nodes of 8 GPUs, 96 CPUs and 384 GiB.
func gpuCell(n int) []trace.Node {
	var out []trace.Node
	for i := range n {
		out = append(out, trace.Node{Name: fmt.Sprintf("n%02d", i), CPUMilli: 96000, MemoryMiB: 393216, GPUs: 8, GPUModel: "G"})
	}
	return out
}

// mixPods is a trace of short one-GPU pods and long eight-GPU ones: the
// short ones scatter over the nodes and leave holes an eight-GPU pod
// cannot use until a node is emptied.
func mixPods() []trace.Pod {
	var out []trace.Pod
	for i := range 40 {
		life := int64(600 + 300*(i%7))
		if i%3 == 0 {
			life = 6 * 3600 // some one-GPU pods stay for hours
		}
		out = append(out, trace.Pod{Name: fmt.Sprint("one-", i), CPUMilli: 4000, MemoryMiB: 8192, NumGPU: 1, GPUMilli: 1000, Creation: 0, Deletion: life})
	}
	for i := range 4 {
		out = append(out, trace.Pod{Name: fmt.Sprint("eight-", i), CPUMilli: 32000, MemoryMiB: 65536, NumGPU: 8, GPUMilli: 1000, Creation: 0, Deletion: 4 * 3600})
	}
	return out
}

func TestStreamOffersTheLoad(t *testing.T) {
	pods := mixPods()
	s, err := NewStream(pods, 8*8000, 1.0, 7)
	if err != nil {
		t.Fatal(err)
	}
	// Offered GPU-seconds per second over many arrivals ≈ the capacity.
	var gpuSeconds float64
	var last int64
	for range 200000 {
		a := s.Next()
		gpuSeconds += float64(a.Pod.GPURequestMilli()) * float64(a.Life)
		last = a.At
	}
	offered := gpuSeconds / float64(last) / (8 * 8000)
	if math.Abs(offered-1) > 0.05 {
		t.Errorf("offered load %.3f, want 1", offered)
	}
	// The initial population is length-biased: pods that run for hours
	// are over-represented against the trace, where they are 17 of 44.
	long := 0
	init := s.Initial()
	for _, a := range init {
		if a.Pod.Deletion-a.Pod.Creation >= 4*3600 {
			long++
		}
		if a.Life > a.Pod.Deletion-a.Pod.Creation {
			t.Fatalf("a pod of the initial population has more left (%d s) than its lifetime", a.Life)
		}
	}
	if share := float64(long) / float64(len(init)); share < 0.7 {
		t.Errorf("pods running for hours are %.2f of the initial population, want well above their 0.39 of the trace", share)
	}
	if _, err := NewStream([]trace.Pod{{Name: "x", NumGPU: 1, GPUMilli: 1000, Creation: trace.Absent, Deletion: trace.Absent}}, 1000, 1, 1); !errors.Is(err, ErrNoTimes) {
		t.Errorf("a trace without times: %v", err)
	}
}

func churnConfig() Config {
	return Config{Nodes: gpuCell(8), Pods: mixPods(), Policy: "FGD+", Seed: 3, Load: 1.0, Patience: 1800, Warmup: 0.5, Days: 2}
}

func TestRebalancerRecoversWhatFragmentationLoses(t *testing.T) {
	cfg := churnConfig()
	alone, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	bound, err := Pooled(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	pl := &Planner{PerDay: 0.05, Period: 600, Cooldown: 3600, Weights: rebalance.Weights{GPUFrag: 1}, Evacuate: 8, ForWaiting: true,
		Survival: SurvivalOf(cfg.Pods, cfg.Patience)}
	cfg.Rebalancer, cfg.Period = pl, 600
	with, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("alone %.2f%%, rebalanced %.2f%% (%.2f%% of pods a day), pooled %.2f%%", alone.GPUAlloc, with.GPUAlloc, with.MigratedPerDay, bound.GPUAlloc)
	if !(bound.GPUAlloc > alone.GPUAlloc) {
		t.Fatalf("the pooled bound (%.2f) does not beat the policy (%.2f): nothing lost to fragmentation", bound.GPUAlloc, alone.GPUAlloc)
	}
	if !(with.GPUAlloc > alone.GPUAlloc) || with.TurnedAwayBy["8"] >= alone.TurnedAwayBy["8"] {
		t.Errorf("rebalanced %.2f%% (%d eight-GPU pods turned away), alone %.2f%% (%d)", with.GPUAlloc, with.TurnedAwayBy["8"], alone.GPUAlloc, alone.TurnedAwayBy["8"])
	}
	if with.MigratedPerDay > 5 || with.Migrations == 0 || with.Refused != 0 {
		t.Errorf("%d moves (%.2f%% of pods a day, budget 5%%), %d refused", with.Migrations, with.MigratedPerDay, with.Refused)
	}
}

// TestRunIsDeterministic: one seed, one result, with or without the
// rebalancer.
func TestRunIsDeterministic(t *testing.T) {
	for _, rb := range []bool{false, true} {
		run := func() *Result {
			cfg := churnConfig()
			cfg.Days = 0.5
			if rb {
				cfg.Rebalancer, cfg.Period = &Planner{PerDay: 0.05, Period: 600, Weights: rebalance.Weights{GPUFrag: 1}, Evacuate: 8, ForWaiting: true}, 600
			}
			r, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		a, b := run(), run()
		if fmt.Sprint(*a) != fmt.Sprint(*b) {
			t.Errorf("rebalancer %v: two runs differ:\n%+v\n%+v", rb, *a, *b)
		}
	}
}

// hostile is a rebalancer whose moves the cluster must refuse: onto a
// node without room and for an allocation that does not run.
type hostile struct{}

func (hostile) Plan(now int64, c *cluster.Cluster, running []Running, _ []*trace.Pod) []Move {
	if len(running) == 0 {
		return nil
	}
	a := c.Alloc(running[0].Alloc)
	to := cluster.Placement{Node: (a.Node + 1) % c.NumNodes(), GPUs: cluster.GPUSet(0).With(0).With(1).With(2).With(3).With(4).With(5).With(6).With(7), Milli: 1000}
	return []Move{{Alloc: -5, To: to}, {Alloc: running[0].Alloc, To: to}}
}

func TestMovesTheClusterRefusesLeaveThePodWhereItWas(t *testing.T) {
	cfg := churnConfig()
	cfg.Days = 0.2
	cfg.Rebalancer, cfg.Period = hostile{}, 600
	r, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if r.Refused == 0 {
		t.Error("impossible moves were not refused")
	}
}

func TestChurnRefusesBadConfig(t *testing.T) {
	for _, mod := range []func(*Config){
		func(c *Config) { c.Nodes = nil },
		func(c *Config) { c.Days = 0 },
		func(c *Config) { c.Rebalancer = hostile{} },
		func(c *Config) { c.Policy = "Clairvoyant" },
		func(c *Config) { c.Load = -1 },
	} {
		cfg := churnConfig()
		mod(&cfg)
		if _, err := Run(context.Background(), cfg); !errors.Is(err, ErrBadConfig) {
			t.Errorf("config %+v: err %v, want ErrBadConfig", cfg, err)
		}
	}
}
