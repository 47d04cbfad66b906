package workload_test

import (
	"errors"
	"math"
	"testing"

	"github.com/strata-dev/strata/internal/sim/simtest"
	"github.com/strata-dev/strata/internal/sim/trace"
	"github.com/strata-dev/strata/internal/sim/workload"
)

// proportions is what a mix is specified by: CPU-only pods among all pods,
// and the sharing pods' part of the GPU pods' GPU milli.
func proportions(ps []trace.Pod) (cpuOnly, share float64, gpuPods int) {
	var n, c int
	var s, all int64
	for i := range ps {
		n++
		if ps[i].NumGPU == 0 {
			c++
			continue
		}
		gpuPods++
		all += ps[i].GPURequestMilli()
		if ps[i].IsShare() {
			s += ps[i].GPURequestMilli()
		}
	}
	return float64(c) / float64(n), float64(s) / float64(max(all, 1)), gpuPods
}

func TestRemixProportions(t *testing.T) {
	var base []trace.Pod
	for range 30 {
		base = append(base, pods(0, 0, 1000, 2000, 500, 250, 810, 1000, 0, 470)...)
	}
	baseCPU, baseShare, baseGPU := proportions(base)
	tests := []struct {
		name           string
		mix            workload.Mix
		cpu, share     float64
		gpuPods        int
		cpuTol, shrTol float64
	}{
		{"keep both", workload.Mix{CPUOnlyPods: -1, ShareGPU: -1}, baseCPU, baseShare, baseGPU, 0, 0},
		{"heavier in CPU-only pods", workload.Mix{CPUOnlyPods: 0.4, ShareGPU: -1}, 0.4, baseShare, baseGPU, 0.005, 0},
		{"no CPU-only pods", workload.Mix{CPUOnlyPods: 0, ShareGPU: -1}, 0, baseShare, baseGPU, 0, 0},
		{"heavier in sharing pods", workload.Mix{CPUOnlyPods: -1, ShareGPU: 0.9}, baseCPU, 0.9, baseGPU, 0, 0.01},
		{"only sharing pods", workload.Mix{CPUOnlyPods: -1, ShareGPU: 1}, baseCPU, 1, baseGPU, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := workload.Remix(base, tt.mix, 7)
			if err != nil {
				t.Fatal(err)
			}
			cpu, share, gpuPods := proportions(got)
			if math.Abs(cpu-tt.cpu) > tt.cpuTol+1e-9 || math.Abs(share-tt.share) > tt.shrTol+1e-9 || gpuPods != tt.gpuPods {
				t.Fatalf("CPU-only %.3f share %.3f GPU pods %d; want %.3f±%.2f, %.3f±%.2f, %d",
					cpu, share, gpuPods, tt.cpu, tt.cpuTol, tt.share, tt.shrTol, tt.gpuPods)
			}
			again, _ := workload.Remix(base, tt.mix, 7)
			if len(again) != len(got) || (len(got) > 0 && again[len(again)-1].Name != got[len(got)-1].Name) {
				t.Fatal("the same seed gave another trace")
			}
		})
	}
}

// The openb variants' proportions are reproduced from the default list.
func TestRemixMatchesOpenbVariants(t *testing.T) {
	def := openbPods(t, "default")
	for _, v := range []struct {
		file string
		mix  workload.Mix
	}{
		{"cpu200", workload.Mix{CPUOnlyPods: 0.2, ShareGPU: -1}},
		{"gpushare80", workload.Mix{CPUOnlyPods: -1, ShareGPU: 0.8}},
	} {
		want := openbPods(t, v.file)
		got, err := workload.Remix(def, v.mix, 42)
		if err != nil {
			t.Fatal(err)
		}
		wc, ws, _ := proportions(want)
		gc, gs, _ := proportions(got)
		if math.Abs(wc-gc) > 0.002 || math.Abs(ws-gs) > 0.005 || math.Abs(float64(len(got)-len(want))) > 10 {
			t.Errorf("%s: remix has %d pods, CPU-only %.4f, share %.4f; the file %d, %.4f, %.4f", v.file, len(got), gc, gs, len(want), wc, ws)
		}
	}
}

func TestRemixNeedsAPool(t *testing.T) {
	for _, m := range []workload.Mix{{CPUOnlyPods: 0.3, ShareGPU: -1}, {CPUOnlyPods: -1, ShareGPU: 0.5}} {
		if _, err := workload.Remix(pods(1000, 2000), m, 1); !errors.Is(err, workload.ErrMixPool) {
			t.Errorf("%+v: err %v, want ErrMixPool", m, err)
		}
	}
	if _, err := workload.Remix(pods(1000), workload.Mix{CPUOnlyPods: 1}, 1); err == nil {
		t.Error("CPUOnlyPods 1 accepted")
	}
}

func openbPods(t *testing.T, list string) []trace.Pod {
	t.Helper()
	ps, err := trace.LoadOpenbPods(simtest.Openb(t, "openb_pod_list_"+list+".csv"))
	if err != nil {
		t.Fatal(err)
	}
	return ps
}
