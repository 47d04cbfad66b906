package sim

import (
	"slices"

	"github.com/strata-dev/strata/internal/sim/cluster"
)

// Point is the cell's allocation at one moment. Percentages are of the
// capacity of the nodes that are up.
type Point struct {
	Time       int64   `json:"time"`       // virtual seconds (replay); pods submitted so far (inflation)
	ArrivedGPU float64 `json:"arrivedGpu"` // cumulative GPU request of arrived pods, % of GPU capacity
	GPUAlloc   float64 `json:"gpuAlloc"`   // allocated milli-GPU, %
	CPUAlloc   float64 `json:"cpuAlloc"`
	MemAlloc   float64 `json:"memAlloc"`
	Pending    int     `json:"pending,omitempty"`
}

// FragPoint is the GPU fragmentation ratio at one moment: the share of idle
// GPU milli that a random task of the trace's workload could not use.
type FragPoint struct {
	Time       int64   `json:"time"`
	ArrivedGPU float64 `json:"arrivedGpu"`
	FragRatio  float64 `json:"fragRatio"` // % of idle GPU milli
	FragGPUs   float64 `json:"fragGpus"`  // fragmented GPUs (milli / 1000)
}

// PendingStats summarizes how long pods waited before they were placed
// (replay mode; first placement only).
type PendingStats struct {
	Scheduled   int     `json:"scheduled"`   // pods placed at least once
	Waited      int     `json:"waited"`      // of those, pods that waited at all
	Unscheduled int     `json:"unscheduled"` // pods deleted (or still waiting at the end) before placement
	P50         float64 `json:"p50"`         // seconds, over scheduled pods
	P90         float64 `json:"p90"`
	P99         float64 `json:"p99"`
	Max         float64 `json:"max"`
	Mean        float64 `json:"mean"`
}

// Result is what one run measured.
type Result struct {
	Mode     Mode              `json:"mode"`
	Policy   string            `json:"policy"`
	Seed     int64             `json:"seed"`
	Nodes    int               `json:"nodes"`
	Capacity cluster.Resources `json:"capacity"` // at the end of the run

	Submitted int `json:"submitted"` // pods submitted (inflated count in inflation mode)
	Placed    int `json:"placed"`
	Failed    int `json:"failed"` // inflation: pods that fit nowhere when submitted

	// Final allocation, in % of capacity.
	GPUAlloc float64 `json:"gpuAlloc"`
	CPUAlloc float64 `json:"cpuAlloc"`
	MemAlloc float64 `json:"memAlloc"`
	// FragRatio is the final GPU fragmentation ratio, % of idle GPU milli.
	FragRatio float64 `json:"fragRatio"`
	// Explanation is Config.Explain's pod's placement, when asked for and
	// the pod arrived.
	Explanation *cluster.Explanation `json:"explanation,omitempty"`

	Pending     PendingStats `json:"pending"`
	Preemptions int          `json:"preemptions"` // always 0: no policy preempts yet
	Evicted     int          `json:"evicted"`     // pods re-queued because their node went away
	Skipped     int          `json:"skipped"`     // replay: pods with deletion <= creation, not simulated
	Ignored     int          `json:"ignored"`     // machine updates refused because they would overcommit
	EndTime     int64        `json:"endTime"`     // virtual time of the last event

	Series []Point     `json:"series,omitempty"`
	Frag   []FragPoint `json:"frag,omitempty"`
}

// percentile is the nearest-rank percentile (0 < q <= 1) of sorted values.
func percentile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(q*float64(len(sorted))+0.999999999) - 1
	return sorted[min(max(rank, 0), len(sorted)-1)]
}

func pendingStats(waits []float64, unscheduled int) PendingStats {
	s := PendingStats{Scheduled: len(waits), Unscheduled: unscheduled}
	if len(waits) == 0 {
		return s
	}
	sorted := slices.Clone(waits)
	slices.Sort(sorted)
	var sum float64
	for _, w := range sorted {
		sum += w
		if w > 0 {
			s.Waited++
		}
	}
	s.P50, s.P90, s.P99 = percentile(sorted, 0.50), percentile(sorted, 0.90), percentile(sorted, 0.99)
	s.Max, s.Mean = sorted[len(sorted)-1], sum/float64(len(sorted))
	return s
}

func pct(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

// snapshot is the cell's allocation now.
func snapshot(c *cluster.Cluster, t int64, arrivedGPU int64, gpuCap int64, pending int) Point {
	used, capa := c.Used(), c.Capacity()
	return Point{Time: t, ArrivedGPU: pct(arrivedGPU, gpuCap), GPUAlloc: pct(used.GPUMilli, capa.GPUMilli),
		CPUAlloc: pct(used.CPUMilli, capa.CPUMilli), MemAlloc: pct(used.MemoryMiB, capa.MemoryMiB), Pending: pending}
}
