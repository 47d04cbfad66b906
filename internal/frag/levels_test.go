package frag

import (
	"testing"

	"pgregory.net/rapid"
)

// The per-level fast path of Frag must agree with the per-type definition.
func TestFragLevelsMatchPerType(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var shapes []Shape
		for i, n := 0, rapid.IntRange(1, 30).Draw(t, "pods"); i < n; i++ {
			s := Shape{CPUMilli: rapid.Int64Range(0, 8000).Draw(t, "cpu"), Count: 1}
			switch rapid.IntRange(0, 2).Draw(t, "kind") {
			case 1:
				s.NumGPU, s.PerGPUMilli = 1, rapid.Int64Range(1, 999).Draw(t, "milli")
			case 2:
				s.NumGPU, s.PerGPUMilli = rapid.IntRange(1, 4).Draw(t, "num"), 1000
			}
			if rapid.Bool().Draw(t, "spec") {
				s.Spec = []string{"A"}
			}
			shapes = append(shapes, s)
		}
		d := FromShapes(shapes, 1)
		d.Bind([]string{"A", "B"})
		model := rapid.IntRange(0, 1).Draw(t, "model")
		cpu := rapid.Int64Range(0, 8000).Draw(t, "cpuFree")
		gpus := make([]int64, rapid.IntRange(0, 8).Draw(t, "gpus"))
		var idle int64
		for g := range gpus {
			gpus[g] = rapid.Int64Range(0, 1000).Draw(t, "free")
			idle += gpus[g]
		}
		var want float64
		if idle > 0 {
			for ty := range d.Types {
				want += d.Types[ty].Weight * float64(d.typeFrag(ty, model, cpu, gpus, idle))
			}
		}
		if got := d.Frag(model, cpu, gpus); got < want-1e-6 || got > want+1e-6 {
			t.Fatalf("Frag = %v, per-type sum = %v", got, want)
		}
	})
}
