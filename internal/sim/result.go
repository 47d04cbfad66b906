package sim

import (
	"slices"

	"github.com/strata-dev/strata/internal/sim/cluster"
	"github.com/strata-dev/strata/internal/sim/trace"
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
	Running    int     `json:"running,omitempty"` // replay: pods running
	Evicted    int     `json:"evicted,omitempty"` // replay: evictions so far (simulated and the trace's)
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
	// CarriedOver counts the submitted pods the trace shows pending or
	// running before its window (replay; trace.Pod.CarriedOver): they are
	// not in the pending times.
	CarriedOver int `json:"carriedOver,omitempty"`
	Placed      int `json:"placed"`
	Failed      int `json:"failed"` // inflation: pods that fit nowhere when submitted

	// Final allocation, in % of capacity.
	GPUAlloc float64 `json:"gpuAlloc"`
	CPUAlloc float64 `json:"cpuAlloc"`
	MemAlloc float64 `json:"memAlloc"`
	// FragRatio is the final GPU fragmentation ratio, % of idle GPU milli.
	FragRatio float64 `json:"fragRatio"`
	// Explanation is Config.Explain's pod's placement, when asked for and
	// the pod arrived.
	Explanation *cluster.Explanation `json:"explanation,omitempty"`

	Pending PendingStats `json:"pending"`
	// PendingByPriority splits Pending by the Google trace's priority
	// bands (replay of a trace with priorities).
	PendingByPriority []BandPending `json:"pendingByPriority,omitempty"`
	// TracePending is how long the same pods waited in the trace itself
	// (its SCHEDULE after its SUBMIT), for comparison.
	TracePending *PendingStats `json:"tracePending,omitempty"`
	Preemptions  int           `json:"preemptions"` // always 0: no policy preempts yet
	// Evicted counts the pods the simulation stopped and queued again
	// (Evictions.Machine + Evictions.Resized).
	Evicted   int       `json:"evicted"`
	Evictions Evictions `json:"evictions"`
	Updates   int       `json:"updates,omitempty"` // replay: request updates applied
	Running   int       `json:"running,omitempty"` // replay: pods running at the end
	Waiting   int       `json:"waiting,omitempty"` // replay: pods waiting at the end
	Skipped   int       `json:"skipped"`           // replay: pods with deletion <= creation, not simulated
	Ignored   int       `json:"ignored"`           // machine updates refused because they would overcommit
	EndTime   int64     `json:"endTime"`           // virtual time of the last event

	Series []Point     `json:"series,omitempty"`
	Frag   []FragPoint `json:"frag,omitempty"`
}

// Evictions counts running pods stopped before their end, by cause.
type Evictions struct {
	Machine int `json:"machine"` // their machine was removed (queued again)
	Resized int `json:"resized"` // an update grew the request past what their machine had (queued again)
	Trace   int `json:"trace"`   // the trace evicts them then (its scheduler's decision; the trace resubmits them)
}

// BandPending is the pending time of one band of priorities.
type BandPending struct {
	Band         string `json:"band"` // free (0–1), middle (2–8), production (9+)
	PendingStats `json:",inline"`
}

// percentile is the nearest-rank percentile (0 < q <= 1) of sorted values.
func percentile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(q*float64(len(sorted))+0.999999999) - 1
	return sorted[min(max(rank, 0), len(sorted)-1)]
}

func pendingStats(waits []waitTime, unscheduled int) PendingStats {
	sorted := make([]float64, len(waits))
	for i, w := range waits {
		sorted[i] = w.seconds
	}
	return pendingOf(sorted, unscheduled)
}

func pendingOf(sorted []float64, unscheduled int) PendingStats {
	s := PendingStats{Scheduled: len(sorted), Unscheduled: unscheduled}
	if len(sorted) == 0 {
		return s
	}
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

// priorityBand names the Google trace's bands of priorities (Reiss et al.,
// "Heterogeneity and dynamicity of clouds at scale", 2012): free (0–1),
// middle (2–8: batch and the rest), production (9 and above).
func priorityBand(p int) int {
	switch {
	case p <= 1:
		return 0
	case p <= 8:
		return 1
	}
	return 2
}

var bandNames = [3]string{"free (0-1)", "middle (2-8)", "production (9-11)"}

// pendingByPriority splits waits by band; nil when every pod has priority 0
// (a trace without priorities).
func pendingByPriority(waits []waitTime) []BandPending {
	var bands [3][]float64
	any := false
	for _, w := range waits {
		bands[priorityBand(w.priority)] = append(bands[priorityBand(w.priority)], w.seconds)
		any = any || w.priority != 0
	}
	if !any {
		return nil
	}
	var out []BandPending
	for b := range bands {
		if len(bands[b]) > 0 {
			out = append(out, BandPending{Band: bandNames[b], PendingStats: pendingOf(bands[b], 0)})
		}
	}
	return out
}

// tracePending is how long the trace's own scheduler kept the pods of the
// window waiting (SCHEDULE − SUBMIT); nil when the trace records no such
// times.
func tracePending(pods []trace.Pod) *PendingStats {
	var waits []float64
	for i := range pods {
		p := &pods[i]
		if p.Scheduled != trace.Absent && !p.CarriedOver && p.Scheduled >= p.Creation && (p.Deletion == trace.Absent || p.Deletion > p.Creation) {
			waits = append(waits, float64(p.Scheduled-p.Creation))
		}
	}
	if len(waits) == 0 {
		return nil
	}
	s := pendingOf(waits, 0)
	return &s
}
