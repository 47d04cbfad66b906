package api

import "math"

// Resources is a vector of schedulable quantities. Every dimension is an
// integer in its smallest unit so that arithmetic is exact and comparable.
//
// Quantities are bounded where they enter the cell (internal/resources.Limits,
// checked by the workload parser and the node registration), so sums of
// them stay far inside int64. The arithmetic here does not rely on that
// alone: Add and Sub saturate instead of wrapping, so an overflowing request
// reads as larger than any capacity rather than negative, and AddChecked
// reports an overflow for sums that must be exact (invariant 6).
type Resources struct {
	CPUMilli    int64 `json:"cpuMilli,omitempty"`    // CPU in millicores (1000 = one core)
	MemoryBytes int64 `json:"memoryBytes,omitempty"` // RAM in bytes
	DiskBytes   int64 `json:"diskBytes,omitempty"`   // local disk in bytes
	GPUs        int64 `json:"gpus,omitempty"`        // whole GPUs
	GPUMilli    int64 `json:"gpuMilli,omitempty"`    // a fractional share of one GPU, 1..999 (GPU sharing)
	NetMbps     int64 `json:"netMbps,omitempty"`     // NIC bandwidth in megabits per second
	// Huge pages of each size, in bytes (a whole number of pages): a
	// node's pre-allocated pool, a task's hugetlb limit (docs/hardware.md).
	HugePages2Mi int64 `json:"hugePages2MiBytes,omitempty"`
	HugePages1Gi int64 `json:"hugePages1GiBytes,omitempty"`
}

// Add returns r + o, each dimension saturating at the int64 range.
func (r Resources) Add(o Resources) Resources {
	a, b := r.vector(), o.vector()
	for k := range a {
		a[k] = addSat(a[k], b[k])
	}
	return r
}

// Sub returns r - o, each dimension saturating at the int64 range.
func (r Resources) Sub(o Resources) Resources {
	a, b := r.vector(), o.vector()
	for k := range a {
		a[k] = subSat(a[k], b[k])
	}
	return r
}

// AddChecked returns r + o and true, or false when a dimension's sum does
// not fit an int64: for sums that must stay exact, such as a node's
// incremental accounting, where a saturated value could never be
// subtracted again.
func (r Resources) AddChecked(o Resources) (Resources, bool) {
	a, b := r.vector(), o.vector()
	ok := true
	for k := range a {
		sum := a[k] + b[k]
		ok = ok && !overflows(a[k], b[k], sum)
		a[k] = sum
	}
	return r, ok
}

// overflows reports whether s, the wrapped sum a + b, overflowed: the sum
// moved away from a in the direction opposite to b's sign.
func overflows(a, b, s int64) bool { return (s > a) != (b > 0) }

func addSat(a, b int64) int64 {
	s := a + b
	if overflows(a, b, s) {
		if b > 0 {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return s
}

func subSat(a, b int64) int64 {
	s := a - b
	if (s < a) != (b > 0) { // overflowed
		if b > 0 {
			return math.MinInt64
		}
		return math.MaxInt64
	}
	return s
}

// WholeCores returns how many whole cores milli millicores round up to,
// and those cores in millicores, saturating at math.MaxInt64: what an
// exclusive-cores request is charged. (milli+999)/1000 would wrap for a
// request near the int64 edge and charge one core.
func WholeCores(milli int64) (cores, rounded int64) {
	cores = milli / 1000
	if milli%1000 > 0 {
		cores++
	}
	if cores > math.MaxInt64/1000 {
		return cores, math.MaxInt64
	}
	return cores, cores * 1000
}

// Negative returns the name of the first dimension of r below zero, or
// "". No request and no capacity is ever negative.
func (r Resources) Negative() string {
	for k, v := range r.vector() {
		if v < 0 {
			return Dimensions[k].Name
		}
	}
	return ""
}

// Exceeds reports the name of the first dimension in which r is larger
// than limit, or "" when r fits within limit in every dimension. Only
// aggregate dimensions are compared: a GPU share is checked against one
// GPU's occupancy by the scheduler, never against a total.
func (r Resources) Exceeds(limit Resources) string {
	for k, v := range r.vector() {
		if aggregate[k] && v > limit.vector()[k] {
			return Dimensions[k].Name
		}
	}
	return ""
}

// IsZero reports whether every dimension is zero.
func (r Resources) IsZero() bool { return r == Resources{} }
