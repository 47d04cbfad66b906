package frag

import (
	"math"
	"testing"
)

func TestStep(t *testing.T) {
	// The target: half whole-GPU tasks, half shares of 500 milli, one CPU
	// core each.
	d := FromShapes([]Shape{shape(1000, 1000, 1), shape(1000, 500, 1)}, 1)
	d.Bind([]string{"", "T4"})
	scratch := make([]int64, 8)
	tests := []struct {
		name      string
		gpuFree   []int64
		want      Want
		eligible  func(int) bool
		wantScore float64
		wantGPU   int
	}{
		// Before: whole tasks cannot use 700+200, shares cannot use 200:
		// 0.5×900 + 0.5×200 = 550. A share on GPU 0 leaves 500,700,200:
		// 0.5×1400 + 0.5×200 = 800 (decrease −250); on GPU 1 it leaves
		// 1000,200,200: 0.5×400 + 0.5×400 = 400 (+150). GPU 1 wins.
		{"share picks the gpu that fragments least", []int64{1000, 700, 200}, Want{CPUMilli: 1000, ShareMilli: 500}, nil, Score(150), 1},
		{"share among eligible gpus only", []int64{1000, 700, 200}, Want{CPUMilli: 1000, ShareMilli: 500}, func(g int) bool { return g == 0 }, Score(-250), 0},
		{"share without room", []int64{300, 200}, Want{CPUMilli: 1000, ShareMilli: 500}, nil, 0, -1},
		// Whole: the fully free GPU 0 goes; 0,700,200 fragments 900 for
		// whole tasks and 200 for shares: 550, no change.
		{"whole takes fully free gpus", []int64{1000, 700, 200}, Want{CPUMilli: 1000, GPUs: 1}, nil, Score(0), -1},
		// A CPU-only task that leaves too little CPU for any GPU task makes
		// all 1900 idle milli unusable: decrease 550 − 1900.
		{"cpu-only task starving the gpus", []int64{1000, 700, 200}, Want{CPUMilli: 3500}, nil, Score(550 - 1900), -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := &Node{ModelID: 1, CPUFree: 4000, GPUFree: tt.gpuFree}
			free := append([]int64(nil), tt.gpuFree...)
			score, gpu := d.Step(n, d.NodeFrag(n), tt.want, tt.eligible, scratch)
			if score != tt.wantScore || gpu != tt.wantGPU {
				t.Fatalf("Step = %v on gpu %d, want %v on gpu %d", score, gpu, tt.wantScore, tt.wantGPU)
			}
			for g := range free {
				if n.GPUFree[g] != free[g] {
					t.Fatalf("Step modified the node: %v, was %v", n.GPUFree, free)
				}
			}
		})
	}
}

// A model the distribution was not bound to is read by name.
func TestNodeFragUnboundModel(t *testing.T) {
	s := shape(1000, 500, 1)
	s.Spec = []string{"V100"}
	d := FromShapes([]Shape{s}, 1)
	d.Bind([]string{"T4"})
	bound := d.NodeFrag(&Node{ModelID: -1, Model: "V100", CPUFree: 8000, GPUFree: []int64{1000, 300}})
	other := d.NodeFrag(&Node{ModelID: -1, Model: "H100", CPUFree: 8000, GPUFree: []int64{1000, 300}})
	if bound != 300 || other != 1300 {
		t.Fatalf("NodeFrag = %v (V100), %v (H100), want 300 and 1300", bound, other)
	}
}

func TestCPUKey(t *testing.T) {
	tests := []struct {
		name             string
		cpuFree, idleGPU int64
		want             Want
		r                float64
		wantKey          float64
	}{
		{"cpu task prefers the node with the least idle gpu", 8000, 2000, Want{CPUMilli: 1000}, 1, -0.25},
		{"cpu task on a node without idle gpu", 8000, 0, Want{CPUMilli: 1000}, 1, 0},
		// Imbalance before |8000 − 2×2000| = 4000; after one GPU and 2
		// cores |6000 − 2×1000| = 4000: no change.
		{"gpu task that keeps the balance", 8000, 2000, Want{CPUMilli: 2000, GPUs: 1}, 2, 0},
		// After a share of 500 with 3 cores: |5000 − 2×1500| = 2000; the
		// imbalance falls by 2000 over the band 16000 + 2×8000 + 1.
		{"gpu task that evens the node out", 8000, 2000, Want{CPUMilli: 3000, ShareMilli: 500}, 2, 2000.0 / 32001},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := CPUKey(tt.cpuFree, tt.idleGPU, tt.want, tt.r, 16000, 8000)
			if math.Abs(got-tt.wantKey) > 1e-12 || got < -1 || got > 1 {
				t.Fatalf("CPUKey = %v, want %v", got, tt.wantKey)
			}
		})
	}
}

func TestCPUPerGPU(t *testing.T) {
	// 2 whole-GPU tasks of 4 cores, 4 shares of 250 with 1 core, a CPU
	// task that does not count: (8000 + 4000) / (2000 + 1000).
	got := CPUPerGPU([]Shape{shape(4000, 1000, 2), shape(1000, 250, 4), shape(16000, 0, 10)})
	if got != 4 {
		t.Fatalf("CPUPerGPU = %v, want 4", got)
	}
	if CPUPerGPU(nil) != 0 {
		t.Fatal("no shapes: want 0")
	}
}
