package policy_test

import (
	"testing"

	"github.com/strata-dev/strata/internal/sim/cluster"
	"github.com/strata-dev/strata/internal/sim/policy"
	"github.com/strata-dev/strata/internal/sim/trace"
)

// scoreOf builds the named policy and returns its score for p on node, as
// the Selector would compute it (Prepare first).
func scoreOf(t *testing.T, name string, c *cluster.Cluster, workload []trace.Pod, node int, p *trace.Pod) float64 {
	t.Helper()
	sel, err := policy.New(name, policy.Options{Seed: 1, Workload: workload})
	if err != nil {
		t.Fatal(err)
	}
	if pr, ok := sel.Scorer.(policy.Preparer); ok {
		pr.Prepare(c, p)
	}
	return sel.Scorer.Score(c, node, p)
}

// The paper's policies score in whole numbers 0..100, each by its own
// formula (see the package README for where each comes from).
func TestPaperScores(t *testing.T) {
	big := node("big", 128000, 8) // the largest node: the normalizer
	two := node("two", 64000, 2)
	wholePods := []trace.Pod{pod("w", 1000, 1000)}
	share := func(milli int64) trace.Pod { return pod("s", 1000, milli) }
	tests := []struct {
		name   string
		policy string
		nodes  []trace.Node
		placed []pre
		pod    trace.Pod
		node   int
		want   float64
	}{
		// 100 × (1 − (½·¼ + ¼·⅛)/2) = 92.19 → 92
		{"DotProd whole part", "DotProd", []trace.Node{big, two}, nil, pod("p", 32000, 1000), 1, 92},
		// 100 × (1 − (½·¼ + ½·⅛)) = 81.25 → 81 (before normalization)
		{"BestFit raw whole part", "BestFit", []trace.Node{big, two}, nil, pod("p", 32000, 1000), 1, 81},
		{"GpuPacking CPU-only pod", "GpuPacking", []trace.Node{big}, nil, pod("p", 1000, 0), 0, 0},
		{"GpuPacking idle 8-GPU node: 33 − 8", "GpuPacking", []trace.Node{big}, nil, share(300), 0, 25},
		{"GpuPacking idle 2-GPU node: 33 − 2", "GpuPacking", []trace.Node{two}, nil, share(300), 0, 31},
		{"GpuPacking used node, one fresh GPU: 50 − 1", "GpuPacking", []trace.Node{big},
			[]pre{{pod("x", 1000, 1000), 0, gpus(0)}}, pod("p", 1000, 1000), 0, 49},
		{"GpuPacking used node, two fresh GPUs: 50 − 2", "GpuPacking", []trace.Node{big},
			[]pre{{pod("x", 1000, 1000), 0, gpus(0)}}, pod("p", 1000, 2000), 0, 48},
		// best-fit GPU has 500 free: 100 − (50/10) = 95
		{"GpuPacking shared GPU, tenths free", "GpuPacking", []trace.Node{big},
			[]pre{{share(500), 0, gpus(3)}}, share(300), 0, 95},
		// 990 free: 100 − (99/10) = 91 (9.9 tenths round down)
		{"GpuPacking shared GPU nearly free", "GpuPacking", []trace.Node{big},
			[]pre{{share(10), 0, gpus(3)}}, share(300), 0, 91},
		{"GpuClustering CPU-only pod", "GpuClustering", []trace.Node{big}, nil, pod("p", 1000, 0), 0, 0},
		// only its kind: 75 + 25·500/8000 = 75 + 1
		{"GpuClustering same kind only", "GpuClustering", []trace.Node{big},
			[]pre{{share(500), 0, gpus(0)}}, share(200), 0, 76},
		{"GpuClustering other kind only", "GpuClustering", []trace.Node{big},
			[]pre{{share(500), 0, gpus(0)}}, pod("p", 1000, 1000), 0, 1},
		{"GpuClustering its kind among others", "GpuClustering", []trace.Node{big},
			[]pre{{share(500), 0, gpus(0)}, {pod("x", 1000, 1000), 0, gpus(1)}}, share(200), 0, 50 + 25*1500/8000},
		{"GpuClustering idle 8-GPU node", "GpuClustering", []trace.Node{big}, nil, share(200), 0, 25},
		// idle 2-GPU node: 25 + 25·6000/8000 = 25 + 18
		{"GpuClustering idle small node", "GpuClustering", []trace.Node{big, two}, nil, share(200), 1, 43},
		// fragmentation unchanged: 100·sigmoid(0) = 50
		{"FGD no growth", "FGD", []trace.Node{two}, nil, pod("p", 1000, 0), 0, 50},
		// a fresh GPU keeps 990 that whole-GPU pods cannot use: 100·sigmoid(−0.99) = 27.09
		{"FGD growth of 990", "FGD", []trace.Node{two}, nil, share(10), 0, 27},
		// FGD+ multiplies FGD's score by 4 and adds a key in [−1, 1].
		{"FGD+ keeps FGD's key", "FGD+", []trace.Node{two}, nil, share(10), 0, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := build(t, tc.nodes, tc.placed)
			got := scoreOf(t, tc.policy, c, wholePods, tc.node, &tc.pod)
			if tc.policy == "FGD+" {
				fgd := scoreOf(t, "FGD", c, wholePods, tc.node, &tc.pod)
				if got < 4*fgd-1 || got > 4*fgd+1 {
					t.Fatalf("FGD+ score %v is not 4 × FGD's %v ± 1", got, fgd)
				}
				return
			}
			if got != tc.want {
				t.Fatalf("score = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestBestFitNormalize(t *testing.T) {
	for _, tc := range []struct{ in, want []float64 }{
		{[]float64{81, 40, 60}, []float64{100, 0, 48}}, // 20·100/41 = 48.8 → 48
		{[]float64{7, 7}, []float64{0, 0}},
		{[]float64{0, 1, 3}, []float64{0, 33, 100}},
	} {
		got := append([]float64(nil), tc.in...)
		policy.BestFit{}.Normalize(got)
		for i := range got {
			if got[i] != tc.want[i] {
				t.Fatalf("Normalize(%v) = %v, want %v", tc.in, got, tc.want)
			}
		}
	}
}

// Under TieRank every node gets a rank from the seed, fixed for the run:
// ties always go to the same node within a run, and each node is the
// favourite of about as many seeds as any other.
func TestTieRank(t *testing.T) {
	nodes := []trace.Node{node("a", 8000, 1), node("b", 8000, 1), node("c", 8000, 1), node("d", 8000, 1)}
	c := build(t, nodes, nil)
	p := pod("cpu", 1000, 0) // GpuPacking scores every node 0
	wins := map[int]int{}
	for seed := uint64(0); seed < 800; seed++ {
		sel, err := policy.New("GpuPacking", policy.Options{Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		first, ok := sel.Place(c, &p)
		if !ok {
			t.Fatal("no placement")
		}
		for i := 0; i < 5; i++ {
			if again, _ := sel.Place(c, &p); again.Node != first.Node {
				t.Fatalf("seed %d: tie went to node %d, then %d", seed, first.Node, again.Node)
			}
		}
		wins[first.Node]++
	}
	for n := 0; n < 4; n++ {
		if wins[n] < 150 || wins[n] > 250 {
			t.Fatalf("ranks not uniform over seeds: %v", wins)
		}
	}
	// The rank is a property of the node, not of the pod: a different pod
	// with the same tie goes to the same node.
	sel, _ := policy.New("GpuPacking", policy.Options{Seed: 9})
	a, _ := sel.Place(c, &p)
	q := pod("cpu2", 3000, 0)
	if b, _ := sel.Place(c, &q); b.Node != a.Node {
		t.Fatalf("pods with the same tie went to nodes %d and %d", a.Node, b.Node)
	}
}

func TestTieRules(t *testing.T) {
	nodes := []trace.Node{node("a", 8000, 1), node("b", 8000, 1), node("c", 8000, 1)}
	c := build(t, nodes, nil)
	p := pod("cpu", 1000, 0)
	first, _ := policy.New("BestFit", policy.Options{Seed: 3, TieBreak: policy.TieFirst})
	if pl, _ := first.Place(c, &p); pl.Node != 0 {
		t.Fatalf("TieFirst chose node %d", pl.Node)
	}
	random, _ := policy.New("BestFit", policy.Options{Seed: 3, TieBreak: policy.TieRandom})
	seen := map[int]bool{}
	for i := 0; i < 100; i++ {
		pl, _ := random.Place(c, &p)
		seen[pl.Node] = true
	}
	if len(seen) != 3 {
		t.Fatalf("TieRandom drew only nodes %v", seen)
	}
	if _, err := policy.New("BestFit", policy.Options{TieBreak: "sideways"}); err == nil {
		t.Fatal("unknown tie rule accepted")
	}
}

// Placements that exercise the whole-number scores together with the tie
// rule (TieFirst, so the expected node does not depend on a seed).
func TestWholeScoresDecidePlacements(t *testing.T) {
	share := func(name string, milli int64) trace.Pod { return pod(name, 1000, milli) }
	// Target: whole GPUs 90%, 500-milli shares 10%.
	var workload []trace.Pod
	for i := 0; i < 9; i++ {
		workload = append(workload, pod("w", 1000, 1000))
	}
	workload = append(workload, share("s", 500))
	tests := []struct {
		name     string
		policy   string
		nodes    []trace.Node
		placed   []pre
		pod      trace.Pod
		wantNode int
	}{
		{
			// The pod lowers fragmentation by 9 milli on node 0 (995 free: only
			// the whole-GPU 90% could not use it) and by 10 on node 1 (480
			// free: nobody could): both score 50, so FGD does not prefer the
			// better node 1 and the tie rule decides.
			name: "FGD: decreases within one whole score tie", policy: "FGD",
			nodes:  []trace.Node{node("a", 8000, 1), node("b", 8000, 1)},
			placed: []pre{{share("x", 5), 0, gpus(0)}, {share("y", 520), 1, gpus(0)}},
			pod:    share("p", 10), wantNode: 0,
		},
		{
			// GpuPacking: 290 free on node 0, 200 (the better fit) on node 1;
			// both are 2 whole tenths, so both score 98 and the first wins.
			name: "GpuPacking: tenths that round the same tie", policy: "GpuPacking",
			nodes:  []trace.Node{node("a", 8000, 1), node("b", 8000, 1)},
			placed: []pre{{share("x", 710), 0, gpus(0)}, {share("y", 800), 1, gpus(0)}},
			pod:    share("p", 150), wantNode: 0,
		},
		{
			// BestFit normalizes over the feasible nodes: the fuller node 1
			// wins outright.
			name: "BestFit: normalized scores still rank the fuller node first", policy: "BestFit",
			nodes:  []trace.Node{node("a", 8000, 2), node("b", 8000, 2)},
			placed: []pre{{pod("x", 4000, 1000), 1, gpus(0)}},
			pod:    share("p", 200), wantNode: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := build(t, tc.nodes, tc.placed)
			sel, err := policy.New(tc.policy, policy.Options{Seed: 1, Workload: workload, TieBreak: policy.TieFirst})
			if err != nil {
				t.Fatal(err)
			}
			pl, ok := sel.Place(c, &tc.pod)
			if !ok || pl.Node != tc.wantNode {
				t.Fatalf("placed on node %d (ok %v), want %d", pl.Node, ok, tc.wantNode)
			}
		})
	}
}

// FGD+ follows FGD's score and breaks FGD's ties by where CPU and GPUs are
// left in proportion.
func TestFGDPlusSecondKey(t *testing.T) {
	// The target workload asks for a GPU model the cell does not have, so
	// FGD scores every placement the same (all idle GPU is fragment either
	// way) and only the second key differs; its GPU pods want 4 CPUs per GPU.
	w := pod("w", 4000, 1000)
	w.GPUSpec = []string{"V100"}
	workload := []trace.Pod{w}
	poor, rich := node("poor", 8000, 4), node("rich", 64000, 4) // CPU surplus −8 and +48 cores
	tests := []struct {
		name     string
		nodes    []trace.Node
		placed   []pre
		pod      trace.Pod
		wantNode int
	}{
		{"a CPU-hungry GPU pod goes next to spare CPU", []trace.Node{poor, rich}, nil, pod("p", 8000, 1000), 1},
		{"a CPU-light GPU pod goes where CPU is short", []trace.Node{rich, poor}, nil, pod("p", 1000, 1000), 1},
		{"a CPU-only pod goes where the GPUs are taken", []trace.Node{node("a", 64000, 4), node("b", 64000, 4)},
			[]pre{{pod("x", 1000, 4000), 1, gpus(0, 1, 2, 3)}}, pod("p", 4000, 0), 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := build(t, tc.nodes, tc.placed)
			plain, _ := policy.New("FGD", policy.Options{Seed: 1, Workload: workload, TieBreak: policy.TieFirst})
			if pl, _ := plain.Place(c, &tc.pod); pl.Node != 0 {
				t.Fatalf("FGD did not see a tie (chose node %d)", pl.Node)
			}
			plus, _ := policy.New("FGD+", policy.Options{Seed: 1, Workload: workload, TieBreak: policy.TieFirst})
			pl, ok := plus.Place(c, &tc.pod)
			if !ok || pl.Node != tc.wantNode {
				t.Fatalf("FGD+ placed on node %d (ok %v), want %d", pl.Node, ok, tc.wantNode)
			}
			if _, err := c.Assign(&tc.pod, pl); err != nil {
				t.Fatal(err)
			}
		})
	}
}
