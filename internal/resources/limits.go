package resources

import (
	"fmt"

	"github.com/strata-dev/strata/api"
)

// The largest quantity of each resource that one task, one group instance
// or one node may declare (docs/workload-spec.md, "Limits"): each
// dimension's api.Dimension.Max, named here for the code that speaks of
// one dimension. They are far above any machine built today and far below
// int64's range: with every addend bounded, the sums the scheduler and the
// state store form cannot overflow, and the checked arithmetic of
// api.Resources is a second line, not the only one (invariant 6).
var (
	MaxCPUMilli    = CPULimit.Max
	MaxMemoryBytes = MemoryLimit.Max
	MaxDiskBytes   = DiskLimit.Max
	MaxGPUs        = GPULimit.Max
	MaxGPUMilli    = GPUMilliLimit.Max // a share of one GPU; 1000 is a whole GPU
	MaxNetMbps     = BandwidthLimit.Max
	MaxHugePages   = HugePages2Mi.Max // of each page size
)

// Limit is the bound of one dimension of api.Resources: its entry in
// api.Dimensions, with the dimension's place in the table.
type Limit struct {
	api.Dimension
	index int
}

// Limits lists every dimension's bound, in api.Resources field order.
var Limits = func() []Limit {
	out := make([]Limit, len(api.Dimensions))
	for k, d := range api.Dimensions {
		out[k] = Limit{Dimension: d, index: k}
	}
	return out
}()

// The bound of each dimension, by name.
var (
	CPULimit       = limitOf("cpu")
	MemoryLimit    = limitOf("memory")
	DiskLimit      = limitOf("disk")
	GPULimit       = limitOf("gpu")
	GPUMilliLimit  = limitOf("gpuMilli")
	BandwidthLimit = limitOf("bandwidth")
	HugePages2Mi   = limitOf("hugepages.2Mi")
	HugePages1Gi   = limitOf("hugepages.1Gi")
)

// limitOf is the bound of the dimension named name; a name the table does
// not have is a programming error.
func limitOf(name string) Limit {
	k := api.DimensionIndex(name)
	if k < 0 {
		panic("resources: no dimension " + name)
	}
	return Limits[k]
}

// Of returns r's value in l's dimension.
func (l Limit) Of(r api.Resources) int64 { return r.Get(l.index) }

// Ptr returns a pointer to l's dimension of r.
func (l Limit) Ptr(r *api.Resources) *int64 { return r.Of(l.index) }

// Format writes v in l's unit, as the messages of Check do.
func (l Limit) Format(v int64) string { return FormatLimit(l.Unit, v) }

// Parse reads a quantity of l's unit, as a workload document writes it.
func (l Limit) Parse(s string) (int64, error) { return Parse(l.Unit, s) }

// ParseRequest reads a quantity of l's unit as one task asks for it.
func (l Limit) ParseRequest(s string) (int64, error) { return ParseRequest(l.Unit, s) }

// Check returns why v is out of l's range, or "" when 0 <= v <= l.Max.
func (l Limit) Check(v int64) string {
	switch {
	case v < 0:
		return fmt.Sprintf("must not be negative, got %s", l.Format(v))
	case v > l.Max:
		return fmt.Sprintf("must be at most %s, got %s", l.Format(l.Max), l.Format(v))
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
		if p := l.Check(l.Of(r)); p != "" {
			out = append(out, Violation{l, p})
		}
	}
	return out
}
