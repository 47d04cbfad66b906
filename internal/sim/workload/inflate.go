package workload

import (
	"errors"
	"math/rand/v2"
	"strconv"

	"github.com/strata-dev/strata/internal/sim/trace"
)

// DefaultRatio is the published target: total GPU request 1.3 × capacity.
const DefaultRatio = 1.3

// DefaultSeeds are the published runs' seeds, 42 to 51.
func DefaultSeeds() []int64 { return []int64{42, 43, 44, 45, 46, 47, 48, 49, 50, 51} }

// ErrNoGPUDemand is returned when the trace requests no GPU at all, so no
// amount of sampling can reach the target.
var ErrNoGPUDemand = errors.New("workload requests no GPU; cannot inflate to a GPU target")

// Inflate returns the trace's pods followed by pods drawn uniformly with
// replacement from them (seeded) until the total GPU request is at least
// ratio × gpuCapacityMilli, then shuffles the whole list with a source
// seeded the same way. Sampled copies are renamed "<name>~<k>" (k counts the
// samples) so every pod has a unique name. If the trace alone already
// reaches the target nothing is sampled and nothing is dropped.
//
// The GPU request of a pod is trace.Pod.GPURequestMilli: num_gpu × 1000 for
// whole GPUs, gpu_milli for a sharing pod. The input slice is not modified.
func Inflate(pods []trace.Pod, gpuCapacityMilli int64, ratio float64, seed int64) ([]trace.Pod, error) {
	var total int64
	for i := range pods {
		total += pods[i].GPURequestMilli()
	}
	target := ratio * float64(gpuCapacityMilli)
	if total == 0 && target > 0 {
		return nil, ErrNoGPUDemand
	}
	out := make([]trace.Pod, len(pods), len(pods)+len(pods)/2)
	copy(out, pods)
	sampler := newRand(seed)
	for k := 1; float64(total) < target; k++ {
		p := pods[sampler.IntN(len(pods))]
		p.Name += "~" + strconv.Itoa(k)
		total += p.GPURequestMilli()
		out = append(out, p)
	}
	shuffler := newRand(seed)
	shuffler.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out, nil
}

func newRand(seed int64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), 0x1f1a7e))
}

// TotalGPUMilli sums the GPU requests of pods.
func TotalGPUMilli(pods []trace.Pod) int64 {
	var total int64
	for i := range pods {
		total += pods[i].GPURequestMilli()
	}
	return total
}
