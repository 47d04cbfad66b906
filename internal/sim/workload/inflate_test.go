package workload_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/strata-dev/strata/internal/sim/simtest"
	"github.com/strata-dev/strata/internal/sim/trace"
	"github.com/strata-dev/strata/internal/sim/workload"
)

func pods(reqs ...int64) []trace.Pod {
	var out []trace.Pod
	for i, r := range reqs {
		p := trace.Pod{Name: "p" + string(rune('a'+i)), CPUMilli: 1000}
		switch {
		case r >= 1000:
			p.NumGPU, p.GPUMilli = int(r/1000), 1000
		case r > 0:
			p.NumGPU, p.GPUMilli = 1, r
		}
		out = append(out, p)
	}
	return out
}

func names(ps []trace.Pod) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return out
}

func TestInflateStopRule(t *testing.T) {
	tests := []struct {
		name     string
		reqs     []int64
		capacity int64
		ratio    float64
		minLen   int
	}{
		{"samples until target", []int64{500, 1000, 0, 2000}, 10000, 1.3, 4},
		{"trace already above target keeps all", []int64{8000, 8000}, 10000, 1.3, 2},
		{"ratio zero adds nothing", []int64{500}, 10000, 0, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := pods(tc.reqs...)
			out, err := workload.Inflate(in, tc.capacity, tc.ratio, 42)
			if err != nil {
				t.Fatal(err)
			}
			total := workload.TotalGPUMilli(out)
			target := tc.ratio * float64(tc.capacity)
			if float64(total) < target || len(out) < tc.minLen {
				t.Fatalf("total %d < target %.0f (len %d)", total, target, len(out))
			}
			// Minimal: without the last sampled pod the total falls below the target.
			if n := len(out) - len(in); n > 0 {
				lastName := "~" + strconv.Itoa(n)
				for _, p := range out {
					if strings.HasSuffix(p.Name, lastName) && float64(total-p.GPURequestMilli()) >= target {
						t.Fatalf("sampled past the target: %d - %d >= %.0f", total, p.GPURequestMilli(), target)
					}
				}
			}
			// Every original pod is present exactly once.
			for _, p := range in {
				if !slices.Contains(names(out), p.Name) {
					t.Fatalf("original pod %s missing", p.Name)
				}
			}
		})
	}
	if _, err := workload.Inflate(pods(0, 0), 1000, 1.3, 1); err == nil {
		t.Fatal("no GPU demand accepted")
	}
}

func TestInflateDeterministic(t *testing.T) {
	in := pods(100, 200, 300, 1000, 0, 4000, 470, 810)
	a, _ := workload.Inflate(in, 50000, 1.3, 42)
	b, _ := workload.Inflate(in, 50000, 1.3, 42)
	c, _ := workload.Inflate(in, 50000, 1.3, 43)
	if !slices.Equal(names(a), names(b)) {
		t.Fatal("same seed, different sequences")
	}
	if slices.Equal(names(a), names(c)) {
		t.Fatal("different seeds, same sequence")
	}
	if in[0].Name != "pa" {
		t.Fatal("input modified")
	}
}

func TestInflateOpenbDefault(t *testing.T) {
	nodes, err := trace.LoadOpenbNodes(simtest.Openb(t, "openb_node_list_gpu_node.csv"))
	if err != nil {
		t.Fatal(err)
	}
	in, err := trace.LoadOpenbPods(simtest.Openb(t, "openb_pod_list_default.csv"))
	if err != nil {
		t.Fatal(err)
	}
	capacity := trace.GPUCapacityMilli(nodes)
	for _, seed := range workload.DefaultSeeds() {
		out, err := workload.Inflate(in, capacity, workload.DefaultRatio, seed)
		if err != nil {
			t.Fatal(err)
		}
		total := workload.TotalGPUMilli(out)
		if float64(total) < 1.3*float64(capacity) || float64(total) > 1.3*float64(capacity)+8000 {
			t.Fatalf("seed %d: total %d vs target %.0f", seed, total, 1.3*float64(capacity))
		}
	}
}
