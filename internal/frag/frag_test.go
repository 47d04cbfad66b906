package frag

import (
	"math"
	"testing"
)

// shape is a test shape: gpu in milli, ≥1000 for whole GPUs.
func shape(cpu, gpu int64, count float64) Shape {
	s := Shape{CPUMilli: cpu, Count: count}
	switch {
	case gpu >= 1000:
		s.NumGPU, s.PerGPUMilli = int(gpu/1000), 1000
	case gpu > 0:
		s.NumGPU, s.PerGPUMilli = 1, gpu
	}
	return s
}

func TestFragMatchesDefinition(t *testing.T) {
	d := FromShapes([]Shape{shape(1000, 1000, 2), shape(1000, 500, 1), shape(1000, 0, 1)}, 1)
	d.Bind([]string{"T4"})
	// Node: 4 CPU free, GPUs with 1000, 700, 200 free (idle 1900).
	// whole (p=.5): fits, fragment = 700+200 = 900; share 500 (p=.25): fragment = 200;
	// cpu-only (p=.25): all 1900 idle is unusable.
	want := 0.5*900 + 0.25*200 + 0.25*1900
	if got := d.Frag(0, 4000, []int64{1000, 700, 200}); got != want {
		t.Fatalf("Frag = %v, want %v", got, want)
	}
	if got := d.Frag(0, 500, []int64{1000, 700, 200}); got != 1900 {
		t.Fatalf("Frag(cpu-starved) = %v, want 1900", got)
	}
}

func TestFragRespectsModels(t *testing.T) {
	s := shape(1000, 500, 1)
	s.Spec = []string{"V100"}
	d := FromShapes([]Shape{s}, 1)
	d.Bind([]string{"T4", "V100"})
	if got := d.Frag(0, 8000, []int64{1000}); got != 1000 {
		t.Fatalf("T4 node: Frag = %v, want all idle (model not accepted)", got)
	}
	if got := d.Frag(1, 8000, []int64{1000, 300}); got != 300 {
		t.Fatalf("V100 node: Frag = %v, want 300", got)
	}
	if d.ModelID("V100") != 1 || d.ModelID("H100") != -1 || !d.BoundTo([]string{"T4", "V100"}) {
		t.Fatalf("model ids")
	}
}

func TestFromShapesMergesAndCuts(t *testing.T) {
	// a 60%, b 30% (given in two parts), c 10%: a cut at 85% keeps a and b.
	d := FromShapes([]Shape{shape(1000, 1000, 6), shape(2000, 500, 1), shape(4000, 0, 1), shape(2000, 500, 2)}, 0.85)
	if len(d.Types) != 2 || d.Types[0].NumGPU != 1 || d.Types[0].Weight != 6.0/9 || d.Types[1].PerGPUMilli != 500 {
		t.Fatalf("types = %+v", d.Types)
	}
	if all := FromShapes([]Shape{shape(1000, 1000, 6), shape(4000, 0, 1)}, 1); len(all.Types) != 2 {
		t.Fatalf("full coverage kept %d types", len(all.Types))
	}
	// Equal counts: larger first (c before b), as the artifact sorts.
	d = FromShapes([]Shape{shape(1000, 1000, 90), shape(2000, 500, 5), shape(4000, 0, 5)}, DefaultCoverage)
	if len(d.Types) != 2 || d.Types[1].CPUMilli != 4000 || d.Types[0].Weight != 90.0/95 {
		t.Fatalf("types = %+v", d.Types)
	}
}

func TestScore(t *testing.T) {
	tests := []struct {
		decrease, want float64
	}{
		{0, 50}, {-1e9, 0}, {1e9, 100}, {1000, 73}, {-1000, 26}, {39, 50}, {41, 51},
	}
	for _, tt := range tests {
		if got := Score(tt.decrease); got != tt.want {
			t.Errorf("Score(%v) = %v, want %v", tt.decrease, got, tt.want)
		}
	}
	if math.IsNaN(Score(math.Inf(-1))) {
		t.Fatal("NaN")
	}
}

func TestFragOfUnboundModelMatchesBound(t *testing.T) {
	s := shape(1000, 500, 1)
	s.Spec = []string{"V100"}
	d := FromShapes([]Shape{s, shape(2000, 2000, 2), shape(500, 0, 1)}, 1)
	bound := FromShapes([]Shape{s, shape(2000, 2000, 2), shape(500, 0, 1)}, 1)
	bound.Bind([]string{"T4", "V100"})
	for _, model := range []string{"T4", "V100"} {
		for _, gpus := range [][]int64{{1000, 300}, {1000, 1000}, {0, 0}, {600}} {
			for _, cpu := range []int64{0, 800, 4000} {
				if a, b := d.FragOf(model, cpu, gpus), bound.FragOf(model, cpu, gpus); math.Abs(a-b) > 1e-9 {
					t.Fatalf("%s cpu %d gpus %v: unbound %v, bound %v", model, cpu, gpus, a, b)
				}
			}
		}
	}
}
