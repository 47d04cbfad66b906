package sharefit

import (
	"context"
	"strconv"
	"testing"

	"github.com/strata-dev/strata/internal/sim/simtest"
	"github.com/strata-dev/strata/internal/sim/trace"
)

// dutySeries is a pod busy pct % of the time (in the file's percent).
func dutySeries(pod string, pct float64, n int) trace.UsageSeries {
	s := trace.UsageSeries{Pod: pod}
	for i := 0; i < n; i++ {
		s.Samples = append(s.Samples, trace.UsageSample{Time: int64(60 * i), Value: pct})
	}
	return s
}

func TestSharesFitMorePods(t *testing.T) {
	var nodes []trace.Node
	for k := 0; k < 4; k++ {
		nodes = append(nodes, trace.Node{Name: "n" + strconv.Itoa(k), CPUMilli: 64000, MemoryMiB: 256 * 1024, GPUs: 2, GPUModel: "G1"})
	}
	templates := []trace.Pod{{Name: "cpu-only", CPUMilli: 1000, MemoryMiB: 1024},
		{Name: "whole", CPUMilli: 4000, MemoryMiB: 8192, NumGPU: 1, GPUMilli: 1000}}
	duty := []trace.UsageSeries{dutySeries("a", 20, 120), dutySeries("b", 20, 120), dutySeries("young", 20, 5)}
	r, err := Experiment(context.Background(), Options{Nodes: nodes, Templates: templates, Duty: duty, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	// 8 GPUs: 8 pods on whole GPUs; at 250 milli (20 % + 20 %, rounded up
	// to 50) four share each GPU: 32, the CPU (16 × 4 cores) allowing 64.
	if r.Pods != 2 || r.Skipped != 1 || r.MedianMilli != 250 || r.Submitted != 24 {
		t.Fatalf("sized %d (skipped %d), median %d milli, submitted %d", r.Pods, r.Skipped, r.MedianMilli, r.Submitted)
	}
	if r.Whole.Placed != 8 || r.Recommended.Placed != 24 || r.MorePods != 16 {
		t.Fatalf("whole %d, recommended %d placed; want 8 and all 24", r.Whole.Placed, r.Recommended.Placed)
	}
}

// TestOnOpenb sizes the shared GenAI duty cycles and fits them on the
// openb cluster by FGD+.
func TestOnOpenb(t *testing.T) {
	if testing.Short() {
		t.Skip("fills the 6,212-GPU openb cluster twice")
	}
	nodes, err := trace.LoadOpenbNodes(simtest.Openb(t, "openb_node_list_gpu_node.csv"))
	if err != nil {
		t.Fatal(err)
	}
	pods, err := trace.LoadOpenbPods(simtest.Openb(t, "openb_pod_list_default.csv"))
	if err != nil {
		t.Fatal(err)
	}
	duty, err := trace.LoadUsageSeries(simtest.GenAI(t, "pod_gpu_duty_cycle_anon.csv.gz"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := Experiment(context.Background(), Options{Nodes: nodes, Templates: pods, Duty: duty, Seed: 42})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("median p95 duty %.1f%%, median share %d milli; placed whole %d, recommended %d (+%d, %.0f%%)",
		r.MedianDutyP, r.MedianMilli, r.Whole.Placed, r.Recommended.Placed, r.MorePods, 100*r.MoreFraction)
	if r.MedianDutyP < 25 || r.MedianDutyP > 29 {
		t.Errorf("median p95 duty %.1f%%, the trace's README says 27%%", r.MedianDutyP)
	}
	if r.Whole.Placed > r.GPUs || r.MoreFraction < 0.5 {
		t.Errorf("whole %d on %d GPUs, recommended %d: want at most one a GPU, and half as many again with shares", r.Whole.Placed, r.GPUs, r.Recommended.Placed)
	}
}
