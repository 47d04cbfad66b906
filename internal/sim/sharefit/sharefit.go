package sharefit

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"

	"github.com/strata-dev/strata/internal/autopilot/gpushare"
	"github.com/strata-dev/strata/internal/sim"
	"github.com/strata-dev/strata/internal/sim/policy"
	"github.com/strata-dev/strata/internal/sim/trace"
)

// Options of one experiment.
type Options struct {
	Nodes []trace.Node
	// Templates give the pods their CPU and memory: pods of a trace that
	// ask for exactly one whole GPU (an openb pod list); pod k of the
	// GenAI trace takes template k mod len.
	Templates []trace.Pod
	// Duty is each pod's duty cycle in percent (the GenAI file's unit).
	Duty  []trace.UsageSeries
	Share gpushare.Config
	// PodsPerGPU: Submitted = PodsPerGPU × the cluster's GPUs (default 3,
	// enough to fill it with shares).
	PodsPerGPU float64
	Seed       int64
	Policy     string // default FGD+
	Progress   func(done, total int)
}

// Sized is one GenAI pod's recommendation.
type Sized struct {
	Pod    string  `json:"pod"`
	Milli  int64   `json:"milli"`
	DutyP  float64 `json:"dutyQuantile"` // the duty cycle's quantile, %
	Reason string  `json:"reason"`
}

// Run is one sizing's outcome.
type Run struct {
	Sizing   string  `json:"sizing"` // "whole-gpu" or "recommended"
	Placed   int     `json:"placed"`
	Failed   int     `json:"failed"`
	GPUAlloc float64 `json:"gpuAlloc"`
	CPUAlloc float64 `json:"cpuAlloc"`
	MemAlloc float64 `json:"memAlloc"`
}

// Result of an experiment.
type Result struct {
	Policy       string  `json:"policy"`
	Pods         int     `json:"pods"`        // GenAI pods sized
	Skipped      int     `json:"skipped"`     // too few samples to size: left out
	MedianDutyP  float64 `json:"medianDutyP"` // median over the pods of their duty quantile, %
	MedianMilli  int64   `json:"medianMilli"` // median recommended share
	Submitted    int     `json:"submitted"`   // pods submitted in each run
	GPUs         int     `json:"gpus"`        // in the cluster
	Whole        Run     `json:"whole"`
	Recommended  Run     `json:"recommended"`
	MorePods     int     `json:"morePods"`     // Recommended.Placed − Whole.Placed
	MoreFraction float64 `json:"moreFraction"` // MorePods / Whole.Placed
	Sizes        []Sized `json:"sizes"`
}

// Experiment sizes the pods and runs both sizings.
func Experiment(ctx context.Context, o Options) (*Result, error) {
	if len(o.Nodes) == 0 {
		return nil, errors.New("no nodes")
	}
	var templates []trace.Pod
	for _, p := range o.Templates {
		if p.NumGPU == 1 && p.GPUMilli == trace.MilliPerGPU {
			templates = append(templates, p)
		}
	}
	if len(templates) == 0 {
		return nil, errors.New("no template pod asks for exactly one whole GPU")
	}
	if o.PodsPerGPU <= 0 {
		o.PodsPerGPU = 3
	}
	if o.Policy == "" {
		o.Policy = policy.FGDPlusName
	}
	res := &Result{Policy: o.Policy}
	for _, n := range o.Nodes {
		res.GPUs += n.GPUs
	}
	var whole, shared []trace.Pod
	for _, s := range o.Duty {
		duty := make([]float64, len(s.Samples))
		for i, v := range s.Samples {
			duty[i] = min(v.Value/100, 1)
		}
		rec, err := gpushare.Recommend(o.Share, duty)
		if err != nil {
			return nil, fmt.Errorf("pod %s: %w", s.Pod, err)
		}
		if !rec.Ready {
			res.Skipped++
			continue
		}
		t := templates[len(res.Sizes)%len(templates)]
		p := trace.Pod{Name: s.Pod, CPUMilli: t.CPUMilli, MemoryMiB: t.MemoryMiB, NumGPU: 1, GPUMilli: trace.MilliPerGPU,
			Creation: 0, Deletion: trace.Absent, Scheduled: trace.Absent}
		whole = append(whole, p)
		p.GPUMilli = rec.Milli
		shared = append(shared, p)
		res.Sizes = append(res.Sizes, Sized{Pod: s.Pod, Milli: rec.Milli, DutyP: 100 * rec.Duty, Reason: rec.Reason})
	}
	if len(res.Sizes) == 0 {
		return nil, errors.New("no pod has enough duty-cycle samples to be sized")
	}
	res.Pods = len(res.Sizes)
	duties := make([]float64, 0, res.Pods)
	millis := make([]int64, 0, res.Pods)
	for _, s := range res.Sizes {
		duties, millis = append(duties, s.DutyP), append(millis, s.Milli)
	}
	sort.Float64s(duties)
	sort.Slice(millis, func(i, j int) bool { return millis[i] < millis[j] })
	res.MedianDutyP, res.MedianMilli = duties[len(duties)/2], millis[len(millis)/2]

	// The same draws for both sizings: pod k of a run is pod idx[k].
	res.Submitted = int(o.PodsPerGPU * float64(res.GPUs))
	rng := rand.New(rand.NewPCG(uint64(o.Seed), 0x5ea7))
	idx := make([]int, res.Submitted)
	for k := range idx {
		idx[k] = rng.IntN(res.Pods)
	}
	runOne := func(sizing string, base []trace.Pod, step int) (Run, error) {
		pods := make([]trace.Pod, len(idx))
		for k, i := range idx {
			pods[k] = base[i]
			pods[k].Name += "#" + strconv.Itoa(k)
		}
		cfg := sim.Config{Nodes: o.Nodes, Pods: pods, Mode: sim.ModeInflation, Policy: o.Policy, Seed: o.Seed,
			InflationRatio: 1e-9, NoSeries: true} // the list is the workload: nothing sampled
		if o.Progress != nil {
			cfg.Progress = func(done, total int) { o.Progress(step*total+done, 2*total) }
		}
		r, err := sim.Run(ctx, cfg)
		if err != nil {
			return Run{}, fmt.Errorf("%s: %w", sizing, err)
		}
		return Run{Sizing: sizing, Placed: r.Placed, Failed: r.Failed, GPUAlloc: r.GPUAlloc, CPUAlloc: r.CPUAlloc, MemAlloc: r.MemAlloc}, nil
	}
	var err error
	if res.Whole, err = runOne("whole-gpu", whole, 0); err != nil {
		return nil, err
	}
	if res.Recommended, err = runOne("recommended", shared, 1); err != nil {
		return nil, err
	}
	res.MorePods = res.Recommended.Placed - res.Whole.Placed
	if res.Whole.Placed > 0 {
		res.MoreFraction = float64(res.MorePods) / float64(res.Whole.Placed)
	}
	return res, nil
}
