package frag_test

import (
	"testing"

	"github.com/strata-dev/strata/internal/sim/frag"
	"github.com/strata-dev/strata/internal/sim/trace"
)

func pod(cpu, gpu int64) trace.Pod {
	p := trace.Pod{Name: "p", CPUMilli: cpu}
	switch {
	case gpu >= 1000:
		p.NumGPU, p.GPUMilli = int(gpu/1000), 1000
	case gpu > 0:
		p.NumGPU, p.GPUMilli = 1, gpu
	}
	return p
}

// FromPods counts pod shapes; the cut is frag.FromShapes's.
func TestFromPods(t *testing.T) {
	var pods []trace.Pod
	for i := 0; i < 90; i++ {
		pods = append(pods, pod(1000, 1000))
	}
	for i := 0; i < 5; i++ {
		pods = append(pods, pod(2000, 500), pod(4000, 0))
	}
	d := frag.FromPods(pods, frag.DefaultCoverage)
	if frag.DefaultCoverage != 0.95 || len(d.Types) != 2 || d.Types[1].CPUMilli != 4000 || d.Types[0].Weight != 90.0/95 {
		t.Fatalf("types = %+v", d.Types)
	}
	if all := frag.FromPods(pods, 1); len(all.Types) != 3 {
		t.Fatalf("full coverage kept %d types", len(all.Types))
	}
}
