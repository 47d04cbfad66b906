package workload

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/strata-dev/strata/internal/sim/trace"
)

// Mix says how a derived trace weighs its pods, in the terms the openb
// trace's own variants use (shared/traces/README.md): openb_pod_list_cpuNNN
// keeps every GPU pod of the default list and samples CPU-only pods until
// they are NNN/10 % of all pods (cpu050: 5.0 %, cpu200: 20.0 %);
// gpushareNN keeps the CPU-only pods and the pod count and samples the GPU
// pods so that GPU-sharing pods ask NN % of the GPU milli the GPU pods ask
// (gpushare80: 80.0 %). A negative field keeps the trace's own proportion.
type Mix struct {
	// CPUOnlyPods is the share of all pods that ask no GPU, in [0, 1).
	CPUOnlyPods float64
	// ShareGPU is the share of the GPU pods' GPU milli asked by
	// GPU-sharing pods, in [0, 1].
	ShareGPU float64
}

// ErrMixPool is returned when the trace lacks the pods a mix must sample
// from (no CPU-only pods to reach a CPU-only share, no sharing or no
// whole-GPU pods to reach a GPU-sharing share).
var ErrMixPool = errors.New("trace has no pods of a kind the mix samples")

// Remix builds a trace of the same kind of pods in other proportions, by
// the trace's own sampling method (Mix): uniform draws with replacement
// from the pods of each kind, seeded, in a deterministic order (GPU pods
// first, then CPU-only ones; Inflate shuffles). Drawn copies are renamed
// "<name>~mK" so names stay unique. The input is not modified.
func Remix(pods []trace.Pod, m Mix, seed int64) ([]trace.Pod, error) {
	var cpuOnly, share, whole []int
	for i := range pods {
		switch p := &pods[i]; {
		case p.NumGPU == 0:
			cpuOnly = append(cpuOnly, i)
		case p.IsShare():
			share = append(share, i)
		default:
			whole = append(whole, i)
		}
	}
	if m.CPUOnlyPods >= 1 || m.ShareGPU > 1 || math.IsNaN(m.CPUOnlyPods) || math.IsNaN(m.ShareGPU) {
		return nil, fmt.Errorf("mix %+v: CPUOnlyPods must be below 1 and ShareGPU at most 1", m)
	}
	r := newRand(seed ^ 0x6d6978)
	k := 0
	draw := func(out []trace.Pod, pool []int) []trace.Pod {
		k++
		p := pods[pool[r.IntN(len(pool))]]
		p.Name += "~m" + strconv.Itoa(k)
		return append(out, p)
	}
	var out []trace.Pod
	nGPU := len(share) + len(whole)
	switch {
	case m.ShareGPU < 0:
		for _, i := range append(append([]int(nil), whole...), share...) {
			out = append(out, pods[i])
		}
	case (m.ShareGPU > 0 && len(share) == 0) || (m.ShareGPU < 1 && len(whole) == 0):
		return nil, fmt.Errorf("mix ShareGPU %.3f: %w", m.ShareGPU, ErrMixPool)
	default:
		// Each draw goes to the kind that is behind its target share.
		var shareMilli, allMilli int64
		for range nGPU {
			if m.ShareGPU > 0 && float64(shareMilli) <= m.ShareGPU*float64(allMilli) {
				out = draw(out, share)
				shareMilli += out[len(out)-1].GPURequestMilli()
			} else {
				out = draw(out, whole)
			}
			allMilli += out[len(out)-1].GPURequestMilli()
		}
	}
	switch {
	case m.CPUOnlyPods < 0:
		for _, i := range cpuOnly {
			out = append(out, pods[i])
		}
	case m.CPUOnlyPods > 0 && len(cpuOnly) == 0:
		return nil, fmt.Errorf("mix CPUOnlyPods %.3f: %w", m.CPUOnlyPods, ErrMixPool)
	default:
		n := int(math.Ceil(m.CPUOnlyPods * float64(nGPU) / (1 - m.CPUOnlyPods)))
		for range n {
			out = draw(out, cpuOnly)
		}
	}
	return out, nil
}
