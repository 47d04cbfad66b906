package sim_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-dev/strata/internal/sim"
	"github.com/strata-dev/strata/internal/sim/cluster"
	"github.com/strata-dev/strata/internal/sim/policy"
	"github.com/strata-dev/strata/internal/sim/trace"
)

func gpuNode(name string, cpu int64, gpus int) trace.Node {
	return trace.Node{Name: name, CPUMilli: cpu, MemoryMiB: 1 << 20, GPUs: gpus, GPUModel: "T4"}
}

func gpuPod(name string, gpuMilli int64, created, deleted int64) trace.Pod {
	p := trace.Pod{Name: name, CPUMilli: 1000, MemoryMiB: 1024, NumGPU: 1, GPUMilli: gpuMilli, Creation: created, Deletion: deleted}
	if gpuMilli > 1000 {
		p.NumGPU, p.GPUMilli = int(gpuMilli/1000), 1000
	}
	return p
}

func run(t *testing.T, cfg sim.Config) *sim.Result {
	t.Helper()
	if cfg.Policy == "" {
		cfg.Policy = "BestFit"
	}
	r, err := sim.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestReplayScenario(t *testing.T) {
	tr, err := trace.LoadNative("trace/testdata/scenario.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r := run(t, sim.Config{Nodes: tr.Nodes, Pods: tr.Pods, NodeEvents: tr.NodeEvents, Mode: sim.ModeReplay})
	if r.Placed != 3 || r.Pending.Scheduled != 3 || r.Pending.Waited != 0 || r.Evicted != 0 || r.EndTime != 100 {
		t.Fatalf("result = %+v", r)
	}
	// At the end only "whole" runs (share deleted at 100, cpu at 30), and cpu-b is gone.
	if r.GPUAlloc != 50 || r.Capacity.CPUMilli != 32000 {
		t.Fatalf("final GPU %.1f%%, capacity %+v", r.GPUAlloc, r.Capacity)
	}
}

func TestReplayPendingTimes(t *testing.T) {
	nodes := []trace.Node{gpuNode("a", 8000, 1)}
	pods := []trace.Pod{
		gpuPod("first", 1000, 0, 100),
		gpuPod("waits", 1000, 10, 200),  // runs at 100: waited 90 s
		gpuPod("expires", 1000, 20, 50), // deleted before it could run
		gpuPod("share", 400, 30, 300),   // waits for "waits" to end at 200? no: fits nowhere until 200
		gpuPod("zero", 400, 40, 40),     // zero length: skipped
	}
	r := run(t, sim.Config{Nodes: nodes, Pods: pods, Mode: sim.ModeReplay})
	want := sim.PendingStats{Scheduled: 3, Waited: 2, Unscheduled: 1, P50: 90, P90: 170, P99: 170, Max: 170, Mean: 260.0 / 3}
	if r.Pending != want || r.Skipped != 1 || r.Submitted != 4 {
		t.Fatalf("pending = %+v skipped %d submitted %d\nwant      %+v", r.Pending, r.Skipped, r.Submitted, want)
	}
}

func TestReplayNodeEvents(t *testing.T) {
	nodes := []trace.Node{gpuNode("a", 8000, 1), gpuNode("late", 8000, 1)}
	pods := []trace.Pod{gpuPod("p0", 1000, 0, trace.Absent), gpuPod("p1", 1000, 5, trace.Absent)}
	events := []trace.NodeEvent{
		{Time: 30, Node: 1, Kind: trace.NodeAdd, CPUMilli: 8000, MemoryMiB: 1 << 20}, // "late" starts down
		{Time: 40, Node: 0, Kind: trace.NodeRemove},
		{Time: 60, Node: 0, Kind: trace.NodeAdd, CPUMilli: 8000, MemoryMiB: 1 << 20},
	}
	r := run(t, sim.Config{Nodes: nodes, Pods: pods, NodeEvents: events, Mode: sim.ModeReplay})
	// p1 waits 25 s for "late"; at 40 p0 is evicted and re-placed when "a" returns at 60.
	if r.Pending.Max != 25 || r.Evicted != 1 || r.Placed != 3 || r.GPUAlloc != 100 {
		t.Fatalf("result = %+v", r)
	}
}

// checkingPlacer verifies the never-overcommit invariant on every call,
// i.e. after every commit the engine made, then delegates.
type checkingPlacer struct {
	t     *rapid.T
	inner cluster.Placer
}

func (cp checkingPlacer) Place(c *cluster.Cluster, p *trace.Pod) (cluster.Placement, bool) {
	for i := 0; i < c.NumNodes(); i++ {
		n := c.Node(i)
		if n.CPUFree < 0 || n.MemFree < 0 {
			cp.t.Fatalf("node %d overcommitted: cpu %d mem %d free", i, n.CPUFree, n.MemFree)
		}
		for g, f := range n.GPUFree {
			if f < 0 || f > 1000 {
				cp.t.Fatalf("node %d GPU %d: %d milli free", i, g, f)
			}
		}
	}
	u, capa := c.Used(), c.Capacity()
	if u.CPUMilli > capa.CPUMilli || u.MemoryMiB > capa.MemoryMiB || u.GPUMilli > capa.GPUMilli {
		cp.t.Fatalf("cluster used %+v exceeds capacity %+v", u, capa)
	}
	return cp.inner.Place(c, p)
}

func TestEngineNeverOvercommits(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var nodes []trace.Node
		for i, n := 0, rapid.IntRange(1, 5).Draw(t, "nodes"); i < n; i++ {
			g := rapid.IntRange(0, 8).Draw(t, "gpus")
			node := trace.Node{Name: "n", CPUMilli: rapid.Int64Range(1000, 32000).Draw(t, "cpu"), MemoryMiB: rapid.Int64Range(1024, 65536).Draw(t, "mem"), GPUs: g}
			if g > 0 {
				node.GPUModel = rapid.SampledFrom([]string{"T4", "A10"}).Draw(t, "model")
			}
			nodes = append(nodes, node)
		}
		var pods []trace.Pod
		for i, n := 0, rapid.IntRange(1, 40).Draw(t, "pods"); i < n; i++ {
			p := trace.Pod{Name: "p", CPUMilli: rapid.Int64Range(0, 16000).Draw(t, "pcpu"), MemoryMiB: rapid.Int64Range(0, 16384).Draw(t, "pmem"),
				Creation: rapid.Int64Range(0, 100).Draw(t, "c"), Deletion: trace.Absent}
			if d := rapid.Int64Range(-1, 200).Draw(t, "d"); d >= 0 {
				p.Deletion = d
			}
			switch rapid.IntRange(0, 2).Draw(t, "kind") {
			case 1:
				p.NumGPU, p.GPUMilli = 1, rapid.Int64Range(1, 999).Draw(t, "milli")
			case 2:
				p.NumGPU, p.GPUMilli = rapid.IntRange(1, 8).Draw(t, "num"), 1000
			}
			if rapid.IntRange(0, 3).Draw(t, "spec") == 0 {
				p.GPUSpec = []string{"A10"}
			}
			pods = append(pods, p)
		}
		pol := rapid.SampledFrom(policy.Names()).Draw(t, "policy")
		mode := rapid.SampledFrom([]sim.Mode{sim.ModeReplay, sim.ModeInflation}).Draw(t, "mode")
		sel, err := policy.New(pol, policy.Options{Seed: 3, Workload: pods})
		if err != nil {
			t.Fatal(err)
		}
		_, err = sim.Run(context.Background(), sim.Config{Nodes: nodes, Pods: pods, Mode: mode, Placer: checkingPlacer{t, sel}, Seed: 3})
		if err != nil && !errors.Is(err, sim.ErrBadConfig) { // no GPU demand cannot be inflated
			t.Fatal(err)
		}
	})
}

func TestInflationDeterministic(t *testing.T) {
	nodes := []trace.Node{gpuNode("a", 16000, 4), gpuNode("b", 32000, 8), gpuNode("c", 8000, 2)}
	var pods []trace.Pod
	for i, g := range []int64{250, 500, 1000, 2000, 750, 0, 1000, 330} {
		p := gpuPod("p", g, int64(i), trace.Absent)
		if g == 0 {
			p.NumGPU, p.GPUMilli = 0, 0
		}
		pods = append(pods, p)
	}
	for _, pol := range policy.Names() {
		a := run(t, sim.Config{Nodes: nodes, Pods: pods, Mode: sim.ModeInflation, Policy: pol, Seed: 42})
		b := run(t, sim.Config{Nodes: nodes, Pods: pods, Mode: sim.ModeInflation, Policy: pol, Seed: 42})
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("%s: same seed, different results", pol)
		}
		last := a.Series[len(a.Series)-1]
		if last.ArrivedGPU < 130 || a.GPUAlloc != last.GPUAlloc || a.Placed+a.Failed != a.Submitted {
			t.Fatalf("%s: last point %+v, result %+v", pol, last, a)
		}
		for i := 1; i < len(a.Series); i++ {
			if a.Series[i].GPUAlloc < a.Series[i-1].GPUAlloc || a.Series[i].ArrivedGPU < a.Series[i-1].ArrivedGPU {
				t.Fatalf("%s: inflation never deletes, yet the curve fell at %d", pol, i)
			}
		}
	}
}

func TestRunErrorsAndCancel(t *testing.T) {
	nodes := []trace.Node{gpuNode("a", 8000, 1)}
	pods := []trace.Pod{gpuPod("p", 500, 0, 10)}
	for _, cfg := range []sim.Config{
		{Pods: pods, Mode: sim.ModeReplay, Policy: "FGD"},
		{Nodes: nodes, Pods: pods, Mode: "sideways", Policy: "FGD"},
		{Nodes: nodes, Pods: pods, Mode: sim.ModeReplay, Policy: "Nope"},
	} {
		if _, err := sim.Run(context.Background(), cfg); !errors.Is(err, sim.ErrBadConfig) {
			t.Errorf("config %+v: err = %v", cfg, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := sim.Run(ctx, sim.Config{Nodes: nodes, Pods: pods, Mode: sim.ModeInflation, Policy: "FGD"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled run: %v", err)
	}
}

func TestProgressAndSeeds(t *testing.T) {
	nodes := []trace.Node{gpuNode("a", 16000, 4), gpuNode("b", 16000, 2)}
	pods := []trace.Pod{gpuPod("x", 300, 0, 5), gpuPod("y", 1000, 1, 9), gpuPod("z", 2000, 2, 4)}
	var last, total int
	run(t, sim.Config{Nodes: nodes, Pods: pods, Mode: sim.ModeInflation, Policy: "FGD", Progress: func(d, n int) { last, total = d, n }})
	if last == 0 || last != total {
		t.Fatalf("progress ended at %d/%d", last, total)
	}
	res, err := sim.RunInflationSeeds(context.Background(), sim.Config{Nodes: nodes, Pods: pods, Policy: "GpuPacking"}, nil, 2)
	if err != nil {
		t.Fatal(err)
	}
	var mean float64
	for i, r := range res.Runs {
		if r.Seed != res.Seeds[i] {
			t.Fatalf("run %d has seed %d", i, r.Seed)
		}
		mean += r.GPUAlloc / float64(len(res.Runs))
	}
	if len(res.Runs) != 10 || res.Seeds[0] != 42 || res.Seeds[9] != 51 || mean != res.MeanGPUAlloc {
		t.Fatalf("seeds result %+v", res)
	}
}

// cancellingPlacer cancels the run's context on its call number at and
// counts the calls made after that.
type cancellingPlacer struct {
	inner  cluster.Placer
	cancel context.CancelFunc
	at     int
	calls  int
	after  int
}

func (cp *cancellingPlacer) Place(c *cluster.Cluster, p *trace.Pod) (cluster.Placement, bool) {
	cp.calls++
	switch {
	case cp.calls == cp.at:
		cp.cancel()
	case cp.calls > cp.at:
		cp.after++
	}
	return cp.inner.Place(c, p)
}

// TestCancelStopsWithinOnePlacement cancels a replay in the middle of a
// pass that places a long queue at once, and in the middle of a stream of
// arrivals: the engine must not ask the placer again.
func TestCancelStopsWithinOnePlacement(t *testing.T) {
	nodes := []trace.Node{{Name: "a", CPUMilli: 1000, MemoryMiB: 1024}}
	queued := []trace.Pod{{Name: "big", CPUMilli: 1000, MemoryMiB: 1, Creation: 0, Deletion: 10}}
	var stream []trace.Pod
	for i := 0; i < 500; i++ {
		queued = append(queued, trace.Pod{Name: "waits", CPUMilli: 1, MemoryMiB: 1, Creation: 1, Deletion: trace.Absent})
		stream = append(stream, trace.Pod{Name: "arrives", CPUMilli: 1, MemoryMiB: 1, Creation: int64(100 + i), Deletion: trace.Absent})
	}
	for _, tc := range []struct {
		name string
		pods []trace.Pod
		at   int
	}{
		// big at 0; the first small pod fails at 1 (its class sleeps);
		// at 10 one pass places the 500: cancel at its 8th placement.
		{"replay pass", queued, 10},
		{"replay arrivals", stream, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sel, err := policy.New("BestFit", policy.Options{Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			cp := &cancellingPlacer{inner: sel, cancel: cancel, at: tc.at}
			_, err = sim.Run(ctx, sim.Config{Nodes: nodes, Pods: tc.pods, Mode: sim.ModeReplay, Placer: cp})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
			if cp.calls < tc.at || cp.after > 0 {
				t.Fatalf("placer called %d times, %d after the cancellation at call %d", cp.calls, cp.after, tc.at)
			}
		})
	}
}

// TestReplayUpdates: a running pod that shrinks makes room at once; one
// that grows within its machine's room stays; one that grows past it is
// stopped and queued again (an eviction); a waiting pod's update changes
// what it waits for.
func TestReplayUpdates(t *testing.T) {
	nodes := []trace.Node{{Name: "a", CPUMilli: 4000, MemoryMiB: 4096}, {Name: "b", CPUMilli: 4000, MemoryMiB: 4096}}
	pods := []trace.Pod{
		{Name: "shrinks", CPUMilli: 4000, MemoryMiB: 1, Creation: 0, Deletion: trace.Absent,
			Updates: []trace.Update{{Time: 10, CPUMilli: 1000, MemoryMiB: 1}}},
		{Name: "grows", CPUMilli: 2000, MemoryMiB: 1, Creation: 0, Deletion: trace.Absent,
			Updates: []trace.Update{{Time: 20, CPUMilli: 3000, MemoryMiB: 1}, {Time: 30, CPUMilli: 3500, MemoryMiB: 1}}},
		{Name: "neighbour", CPUMilli: 1000, MemoryMiB: 1, Creation: 0, Deletion: trace.Absent},
		{Name: "waits", CPUMilli: 3000, MemoryMiB: 1, Creation: 5, Deletion: trace.Absent,
			Updates: []trace.Update{{Time: 8, CPUMilli: 2500, MemoryMiB: 1}}},
	}
	r := run(t, sim.Config{Nodes: nodes, Pods: pods, Mode: sim.ModeReplay})
	// 0: shrinks fills one node, grows and neighbour share the other.
	// 5: waits (3000) fits nowhere; at 8 it wants 2500, still nowhere.
	// 10: shrinks leaves 3000 free: waits starts there, 5 s late.
	// 20: grows to 3000 fits next to neighbour. 30: grows to 3500 does
	// not: it is stopped and waits (nowhere has 3500 free).
	if r.Updates != 4 || r.Evictions.Resized != 1 || r.Evicted != 1 || r.Placed != 4 || r.Waiting != 1 || r.Running != 3 {
		t.Fatalf("updates %d, evictions %+v (%d), placed %d, waiting %d, running %d", r.Updates, r.Evictions, r.Evicted, r.Placed, r.Waiting, r.Running)
	}
	if r.Pending.Max != 5 || r.Pending.Scheduled != 4 {
		t.Fatalf("pending %+v", r.Pending)
	}
	if r.CPUAlloc != 100*float64(1000+2500+1000)/8000 {
		t.Fatalf("final CPU %.2f%%", r.CPUAlloc)
	}
}

// firstFitBatcher is a BatchPlacer that puts each pod of a run on the
// first node with room for it (counting the run's earlier pods) and
// records the runs it was handed.
type firstFitBatcher struct{ runs [][]string }

func (f *firstFitBatcher) Place(c *cluster.Cluster, p *trace.Pod) (cluster.Placement, bool) {
	pls := f.PlaceAll(c, []*trace.Pod{p})
	if len(pls) == 0 {
		return cluster.Placement{}, false
	}
	return pls[0], true
}

func (f *firstFitBatcher) PlaceAll(c *cluster.Cluster, pods []*trace.Pod) []cluster.Placement {
	var names []string
	used := map[int]int64{}
	var out []cluster.Placement
	for _, p := range pods {
		names = append(names, p.Name)
	}
	f.runs = append(f.runs, names)
	for _, p := range pods {
		node := -1
		for i := 0; i < c.NumNodes() && node < 0; i++ {
			if c.Fits(i, p) && c.Node(i).CPUFree-used[i] >= p.CPUMilli {
				node = i
			}
		}
		if node < 0 {
			return out
		}
		used[node] += p.CPUMilli
		out = append(out, cluster.PlacementFor(node, p, 0))
	}
	return out
}

// TestBatchPlacerGetsRunsInQueueOrder: a BatchPlacer is handed the waiting
// pods of one request as runs in queue order — higher priority first, pods
// that joined in the same second together — and a run that does not all
// fit puts its class to sleep until room frees.
func TestBatchPlacerGetsRunsInQueueOrder(t *testing.T) {
	nodes := []trace.Node{{Name: "a", CPUMilli: 10000, MemoryMiB: 1 << 20}}
	pod := func(name string, prio int, created, deleted int64) trace.Pod {
		return trace.Pod{Name: name, CPUMilli: 1000, MemoryMiB: 1, Priority: prio, Creation: created, Deletion: deleted}
	}
	pods := []trace.Pod{
		pod("a1", 0, 0, 5), pod("b1", 9, 0, trace.Absent), pod("a2", 0, 0, trace.Absent), pod("b2", 9, 0, trace.Absent),
		pod("a3", 0, 0, trace.Absent), pod("a4", 0, 1, trace.Absent), pod("a5", 0, 1, trace.Absent),
		pod("a6", 0, 1, trace.Absent), pod("a7", 0, 1, trace.Absent), pod("a8", 0, 1, trace.Absent),
		pod("a9", 0, 1, trace.Absent),
	}
	f := &firstFitBatcher{}
	r := run(t, sim.Config{Nodes: nodes, Pods: pods, Mode: sim.ModeReplay, Placer: f})
	want := [][]string{
		{"b1", "b2"},                         // t=0: priority 9 first
		{"a1", "a2", "a3"},                   // then priority 0, file order within the second
		{"a4", "a5", "a6", "a7", "a8", "a9"}, // t=1: 5 of 6 fit; the class sleeps
		{"a9"},                               // t=5: a1 ends, a9 fits
	}
	if !reflect.DeepEqual(f.runs, want) {
		t.Fatalf("runs %v\nwant %v", f.runs, want)
	}
	if r.Placed != 11 || r.Waiting != 0 || r.Pending.Max != 4 {
		t.Fatalf("placed %d, waiting %d, pending %+v", r.Placed, r.Waiting, r.Pending)
	}
}
