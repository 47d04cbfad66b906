package frag

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-dev/strata/internal/sim/trace"
)

// The per-level fast path of Frag must agree with the per-type definition.
func TestFragLevelsMatchPerType(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var pods []trace.Pod
		for i, n := 0, rapid.IntRange(1, 30).Draw(t, "pods"); i < n; i++ {
			p := trace.Pod{Name: "p", CPUMilli: rapid.Int64Range(0, 8000).Draw(t, "cpu")}
			switch rapid.IntRange(0, 2).Draw(t, "kind") {
			case 1:
				p.NumGPU, p.GPUMilli = 1, rapid.Int64Range(1, 999).Draw(t, "milli")
			case 2:
				p.NumGPU, p.GPUMilli = rapid.IntRange(1, 4).Draw(t, "num"), 1000
			}
			if rapid.Bool().Draw(t, "spec") {
				p.GPUSpec = []string{"A"}
			}
			pods = append(pods, p)
		}
		d := FromPods(pods, 1)
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
