package policy_test

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-dev/strata/internal/sim/cluster"
	"github.com/strata-dev/strata/internal/sim/policy"
	"github.com/strata-dev/strata/internal/sim/trace"
)

// cpuCell draws a cell without GPUs in a few capacity classes, as the
// Google cell is (its 12,580 machines are of 10 CPU × memory classes).
func cpuCell(t *rapid.T) []trace.Node {
	nodes := make([]trace.Node, rapid.IntRange(1, 40).Draw(t, "nodes"))
	for i := range nodes {
		nodes[i] = trace.Node{Name: fmt.Sprintf("m%02d", i),
			CPUMilli:  rapid.SampledFrom([]int64{16000, 32000, 32000, 64000}).Draw(t, "cpu"),
			MemoryMiB: rapid.SampledFrom([]int64{32768, 65536, 131072, 262144}).Draw(t, "mem")}
	}
	return nodes
}

// cpuPod draws a request: mostly small, sometimes as big as a machine;
// sizes repeat (the trace's requests come in few sizes).
func cpuPod(t *rapid.T) trace.Pod {
	p := trace.Pod{Name: "p", CPUMilli: rapid.SampledFrom([]int64{0, 800, 1599, 1600, 4000, 16000, 31000}).Draw(t, "pcpu"),
		MemoryMiB: rapid.SampledFrom([]int64{0, 500, 2048, 8192, 60000}).Draw(t, "pmem")}
	if rapid.IntRange(0, 30).Draw(t, "gpu") == 0 {
		p.NumGPU, p.GPUMilli = 1, 1000 // fits nowhere on this cell
	}
	// Jobs with and without the different-machine constraint.
	if job := rapid.IntRange(0, 3).Draw(t, "job"); job > 0 {
		p.Job, p.DistinctNode = int64(job), rapid.IntRange(0, 2).Draw(t, "distinct") > 0
	}
	return p
}

// TestCPUOnlyScoresAreTheScores holds each CPUOnlyScorer to its Score: on
// a cell without GPUs, for every node a pod fits, the CPU-only function of
// the node's free CPU is the score (or, when it is nil, every node scores
// the same), and the function never grows with free CPU.
func TestCPUOnlyScoresAreTheScores(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		nodes := cpuCell(t)
		c, err := cluster.New(nodes)
		if err != nil {
			t.Fatal(err)
		}
		var pods []trace.Pod
		for k := rapid.IntRange(0, 60).Draw(t, "placed"); k > 0; k-- {
			p := cpuPod(t)
			p.NumGPU, p.GPUMilli = 0, 0
			pods = append(pods, p)
		}
		for k := range pods {
			if i := rapid.IntRange(0, len(nodes)-1).Draw(t, "on"); c.Fits(i, &pods[k]) {
				if _, err := c.Assign(&pods[k], cluster.PlacementFor(i, &pods[k], 0)); err != nil {
					t.Fatal(err)
				}
			}
		}
		p := cpuPod(t)
		p.NumGPU, p.GPUMilli = 0, 0
		for _, name := range policy.Names() {
			sel, err := policy.New(name, policy.Options{Seed: 1, Workload: append(pods, p)})
			if err != nil {
				t.Fatal(err)
			}
			cs, ok := sel.Scorer.(policy.CPUOnlyScorer)
			if !ok {
				t.Fatalf("%s is not a CPUOnlyScorer", name)
			}
			if pr, ok := sel.Scorer.(policy.Preparer); ok {
				pr.Prepare(c, &p)
			}
			f := cs.CPUOnly(c, &p)
			first := true
			var constant float64
			for i := range nodes {
				if !c.Fits(i, &p) {
					continue
				}
				got := sel.Scorer.Score(c, i, &p)
				switch {
				case f != nil && got != f(c.Node(i).CPUFree):
					t.Fatalf("%s: node %d (free %d) scores %v, CPUOnly says %v", name, i, c.Node(i).CPUFree, got, f(c.Node(i).CPUFree))
				case f == nil && !first && got != constant:
					t.Fatalf("%s: CPUOnly says constant, node %d scores %v, another %v", name, i, got, constant)
				}
				first, constant = false, got
			}
			if f != nil {
				for x := p.CPUMilli; x < 64000; x += 97 {
					if f(x+97) > f(x) {
						t.Fatalf("%s: score grows with free CPU: %v at %d, %v at %d", name, f(x), x, f(x+97), x+97)
					}
				}
			}
		}
	})
}

// TestIndexedPlacementsAreTheScans runs two copies of a cell without GPUs
// through the same random life (placements, releases, machines going down,
// coming back, resized), one placed by the indexed Selector, one by the
// Selector that scores every node, and requires the same decision for
// every pod, for every policy and tie rule.
func TestIndexedPlacementsAreTheScans(t *testing.T) {
	for _, name := range policy.Names() {
		for _, tie := range []string{policy.TieRank, policy.TieFirst, policy.TieRandom} {
			t.Run(name+"/"+tie, func(t *testing.T) {
				rapid.Check(t, func(t *rapid.T) { indexedMatchesScan(t, name, tie) })
			})
		}
	}
}

func indexedMatchesScan(t *rapid.T, name, tie string) {
	nodes := cpuCell(t)
	var cells [2]*cluster.Cluster
	var sels [2]*policy.Selector
	var workload []trace.Pod
	for k := 0; k < 5; k++ {
		workload = append(workload, cpuPod(t))
	}
	seed := rapid.Uint64().Draw(t, "seed")
	for k := range cells {
		c, err := cluster.New(nodes)
		if err != nil {
			t.Fatal(err)
		}
		sel, err := policy.New(name, policy.Options{Seed: seed, Workload: workload, TieBreak: tie})
		if err != nil {
			t.Fatal(err)
		}
		cells[k], sels[k] = c, sel
	}
	sels[1].WithoutIndex()
	pods := make([]trace.Pod, 0, 300)
	var live [][2]cluster.AllocID
	for step := rapid.IntRange(1, 150).Draw(t, "steps"); step > 0; step-- {
		switch op := rapid.IntRange(0, 9).Draw(t, "op"); {
		case op <= 5:
			pods = append(pods, cpuPod(t))
			p := &pods[len(pods)-1]
			var pls [2]cluster.Placement
			var oks [2]bool
			for k := range cells {
				pls[k], oks[k] = sels[k].Place(cells[k], p)
			}
			if oks[0] != oks[1] || (oks[0] && pls[0] != pls[1]) {
				t.Fatalf("pod %+v: indexed %v %+v, scan %v %+v", *p, oks[0], pls[0], oks[1], pls[1])
			}
			if !oks[0] {
				continue
			}
			var ids [2]cluster.AllocID
			for k := range cells {
				id, err := cells[k].Assign(p, pls[k])
				if err != nil {
					t.Fatalf("indexed=%v placement refused: %v", k == 0, err)
				}
				ids[k] = id
			}
			live = append(live, ids)
		case op <= 7 && len(live) > 0:
			j := rapid.IntRange(0, len(live)-1).Draw(t, "release")
			for k := range cells {
				if cells[k].Alloc(live[j][k]).Live {
					if err := cells[k].Release(live[j][k]); err != nil {
						t.Fatal(err)
					}
				}
			}
			live = slices.Delete(live, j, j+1)
		case op == 8:
			i := rapid.IntRange(0, len(nodes)-1).Draw(t, "down")
			for k := range cells {
				if _, err := cells[k].SetDown(i); err != nil {
					t.Fatal(err)
				}
			}
		default:
			i := rapid.IntRange(0, len(nodes)-1).Draw(t, "up")
			cpu := nodes[i].CPUMilli + rapid.Int64Range(-8000, 8000).Draw(t, "resize")
			for k := range cells {
				cells[k].SetUp(i, cpu, nodes[i].MemoryMiB) // may refuse to shrink below use: both alike
			}
		}
	}
}

// TestRandomDrawsUniformlyWithoutGPUs draws many placements from one state
// of a cell without GPUs: only feasible nodes come out, each about as often
// (within 5 standard deviations), both while most nodes fit (the uniform
// draws among up nodes hit) and while few do (the feasible list is drawn
// from).
func TestRandomDrawsUniformlyWithoutGPUs(t *testing.T) {
	for _, tc := range []struct {
		name string
		full int // nodes filled so that the pod fits nowhere else
	}{{"most fit", 10}, {"few fit", 195}} {
		t.Run(tc.name, func(t *testing.T) {
			var nodes []trace.Node
			for i := 0; i < 200; i++ {
				nodes = append(nodes, trace.Node{Name: fmt.Sprint(i), CPUMilli: 8000, MemoryMiB: 8192})
			}
			c, err := cluster.New(nodes)
			if err != nil {
				t.Fatal(err)
			}
			filler := trace.Pod{Name: "filler", CPUMilli: 8000, MemoryMiB: 1}
			for i := 0; i < tc.full; i++ {
				if _, err := c.Assign(&filler, cluster.PlacementFor(i*len(nodes)/tc.full, &filler, 0)); err != nil {
					t.Fatal(err)
				}
			}
			sel, err := policy.New("Random", policy.Options{Seed: 7})
			if err != nil {
				t.Fatal(err)
			}
			p := trace.Pod{Name: "p", CPUMilli: 1000, MemoryMiB: 1}
			feasible := len(nodes) - tc.full
			draws := 400 * feasible
			count := map[int]int{}
			for k := 0; k < draws; k++ {
				pl, ok := sel.Place(c, &p)
				if !ok || !c.Fits(pl.Node, &p) {
					t.Fatalf("draw %d: %+v ok=%v: not a feasible node", k, pl, ok)
				}
				count[pl.Node]++
			}
			mean := float64(draws) / float64(feasible)
			for i, n := range count {
				if d := float64(n) - mean; d*d > 25*mean {
					t.Errorf("node %d drawn %d times, expected %.0f ± %.0f", i, n, mean, 5*math.Sqrt(mean))
				}
			}
			if len(count) != feasible {
				t.Errorf("%d nodes drawn, %d feasible", len(count), feasible)
			}
		})
	}
}
