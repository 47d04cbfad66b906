package frag_test

import (
	"testing"

	"github.com/strata-dev/strata/internal/sim/frag"
	"github.com/strata-dev/strata/internal/sim/trace"
)

func pod(name string, cpu, gpu int64) trace.Pod {
	p := trace.Pod{Name: name, CPUMilli: cpu}
	switch {
	case gpu >= 1000:
		p.NumGPU, p.GPUMilli = int(gpu/1000), 1000
	case gpu > 0:
		p.NumGPU, p.GPUMilli = 1, gpu
	}
	return p
}

func TestFragMatchesDefinition(t *testing.T) {
	d := frag.FromPods([]trace.Pod{pod("w", 1000, 1000), pod("s", 1000, 500), pod("c", 1000, 0), pod("w2", 1000, 1000)}, 1)
	d.Bind([]string{"T4"})
	// Node: 4 CPU free, GPUs with 1000, 700, 200 free (idle 1900).
	// whole (p=.5): fits, fragment = 700+200 = 900; share 500 (p=.25): fragment = 200;
	// cpu-only (p=.25): all 1900 idle is unusable.
	want := 0.5*900 + 0.25*200 + 0.25*1900
	if got := d.Frag(0, 4000, []int64{1000, 700, 200}); got != want {
		t.Fatalf("Frag = %v, want %v", got, want)
	}
	// Too little CPU for any type: everything idle is fragment.
	if got := d.Frag(0, 500, []int64{1000, 700, 200}); got != 1900 {
		t.Fatalf("Frag(cpu-starved) = %v, want 1900", got)
	}
}

func TestFromPodsCoverage(t *testing.T) {
	var pods []trace.Pod
	for i := 0; i < 6; i++ {
		pods = append(pods, pod("a", 1000, 1000))
	}
	for i := 0; i < 3; i++ {
		pods = append(pods, pod("b", 2000, 500))
	}
	pods = append(pods, pod("c", 4000, 0))
	d := frag.FromPods(pods, 0.85) // a (60%) + b (30%) cover 90% >= 85%: c dropped
	if len(d.Types) != 2 || d.Types[0].NumGPU != 1 || d.Types[0].Weight != 6.0/9 || d.Types[1].PerGPUMilli != 500 {
		t.Fatalf("types = %+v", d.Types)
	}
	if all := frag.FromPods(pods, 1); len(all.Types) != 3 {
		t.Fatalf("full coverage kept %d types", len(all.Types))
	}
}

func TestFragRespectsModels(t *testing.T) {
	p := pod("s", 1000, 500)
	p.GPUSpec = []string{"V100"}
	d := frag.FromPods([]trace.Pod{p}, 1)
	d.Bind([]string{"T4", "V100"})
	if got := d.Frag(0, 8000, []int64{1000}); got != 1000 {
		t.Fatalf("T4 node: Frag = %v, want all idle (model not accepted)", got)
	}
	if got := d.Frag(1, 8000, []int64{1000, 300}); got != 300 {
		t.Fatalf("V100 node: Frag = %v, want 300", got)
	}
}

// The default target is the artifact's: the most popular shapes covering
// 95% of pods, equally popular shapes taken larger first.
func TestDefaultCoverageCut(t *testing.T) {
	var pods []trace.Pod
	for i := 0; i < 90; i++ {
		pods = append(pods, pod("a", 1000, 1000))
	}
	for i := 0; i < 5; i++ {
		pods = append(pods, pod("b", 2000, 500), pod("c", 4000, 0))
	}
	d := frag.FromPods(pods, frag.DefaultCoverage)
	// a covers 90%; b and c tie at 5% each and c (more CPU) comes first,
	// reaching 95%: b is cut.
	if frag.DefaultCoverage != 0.95 || len(d.Types) != 2 || d.Types[1].CPUMilli != 4000 || d.Types[0].Weight != 90.0/95 {
		t.Fatalf("types = %+v", d.Types)
	}
}
