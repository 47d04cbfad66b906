package resources

import (
	"fmt"
	"strconv"

	"github.com/strata-dev/strata/api"
)

// The largest quantity of each resource that one task, one group instance
// or one node may declare (docs/workload-spec.md, "Limits"). They are far
// above any machine built today and far below int64's range: with every
// addend bounded, the sums the scheduler and the state store form cannot
// overflow, and the checked arithmetic of api.Resources is a second line,
// not the only one (invariant 6).
const (
	MaxCPUMilli    int64 = 1_000_000 * 1000 // one million cores
	MaxMemoryBytes       = PiB              // 1 PiB
	MaxDiskBytes         = 8 * PiB          // 8 PiB
	MaxGPUs        int64 = 4096
	MaxGPUMilli    int64 = 999            // a share of one GPU; 1000 is a whole GPU
	MaxNetMbps     int64 = 1_000_000_000  // 1 Pbps (1,000,000 Gbps)
	MaxHugePages         = MaxMemoryBytes // of each page size
)

// Limit is the bound of one dimension of api.Resources.
type Limit struct {
	// Name is the dimension as a workload document names it (cpu, memory,
	// disk, gpu, gpuMilli, bandwidth); Field is its api.Resources JSON
	// field (cpuMilli, memoryBytes, …).
	Name, Field string
	Max         int64
	get         func(*api.Resources) int64
	format      func(int64) string
}

// The bound of each dimension.
var (
	CPULimit       = Limit{"cpu", "cpuMilli", MaxCPUMilli, func(r *api.Resources) int64 { return r.CPUMilli }, formatCores}
	MemoryLimit    = Limit{"memory", "memoryBytes", MaxMemoryBytes, func(r *api.Resources) int64 { return r.MemoryBytes }, FormatBytes}
	DiskLimit      = Limit{"disk", "diskBytes", MaxDiskBytes, func(r *api.Resources) int64 { return r.DiskBytes }, FormatBytes}
	GPULimit       = Limit{"gpu", "gpus", MaxGPUs, func(r *api.Resources) int64 { return r.GPUs }, formatInt}
	GPUMilliLimit  = Limit{"gpuMilli", "gpuMilli", MaxGPUMilli, func(r *api.Resources) int64 { return r.GPUMilli }, formatInt}
	BandwidthLimit = Limit{"bandwidth", "netMbps", MaxNetMbps, func(r *api.Resources) int64 { return r.NetMbps }, FormatBandwidth}
	HugePages2Mi   = Limit{"hugepages.2Mi", "hugePages2MiBytes", MaxHugePages, func(r *api.Resources) int64 { return r.HugePages2Mi }, FormatBytes}
	HugePages1Gi   = Limit{"hugepages.1Gi", "hugePages1GiBytes", MaxHugePages, func(r *api.Resources) int64 { return r.HugePages1Gi }, FormatBytes}
)

// Limits lists every dimension's bound, in api.Resources field order.
var Limits = []Limit{CPULimit, MemoryLimit, DiskLimit, GPULimit, GPUMilliLimit, BandwidthLimit, HugePages2Mi, HugePages1Gi}

// Of returns r's value in l's dimension.
func (l Limit) Of(r api.Resources) int64 { return l.get(&r) }

// Format writes v in l's unit, as the messages of Check do.
func (l Limit) Format(v int64) string { return l.format(v) }

// Check returns why v is out of l's range, or "" when 0 <= v <= l.Max.
func (l Limit) Check(v int64) string {
	switch {
	case v < 0:
		return fmt.Sprintf("must not be negative, got %s", l.format(v))
	case v > l.Max:
		return fmt.Sprintf("must be at most %s, got %s", l.format(l.Max), l.format(v))
	}
	return ""
}

// Violation is one dimension of a resource vector out of its range.
type Violation struct {
	Limit
	Problem string
}

// OutOfRange returns every dimension of r that is negative or above its
// maximum, in Limits order; nil when r is within bounds.
func OutOfRange(r api.Resources) []Violation {
	var out []Violation
	for _, l := range Limits {
		if p := l.Check(l.get(&r)); p != "" {
			out = append(out, Violation{l, p})
		}
	}
	return out
}

// formatCores writes a CPU bound the way users write it: 1000000 cores,
// 500m.
func formatCores(milli int64) string {
	switch {
	case milli == 1000:
		return "1 core"
	case milli != 0 && milli%1000 == 0:
		return strconv.FormatInt(milli/1000, 10) + " cores"
	}
	return FormatCPU(milli)
}

func formatInt(v int64) string { return strconv.FormatInt(v, 10) }
