package api

import "slices"

// SameNUMA reports whether two NUMA layouts are the same: the same nodes,
// in the same order, with the same cores and memory.
func SameNUMA(a, b []NUMANode) bool {
	return slices.EqualFunc(a, b, func(x, y NUMANode) bool {
		return x.ID == y.ID && x.MemoryBytes == y.MemoryBytes && slices.Equal(x.CPUs, y.CPUs)
	})
}
