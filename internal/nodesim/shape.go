package nodesim

import (
	"fmt"
	"maps"

	"github.com/strata-dev/strata/api"
)

// Shape is what every simulated node declares.
type Shape struct {
	CPUMilli    int64 // default 16 cores
	MemoryBytes int64 // default 64 GiB
	DiskBytes   int64 // default 500 GiB
	NetMbps     int64 // default 10000
	// NUMA splits the CPUs and memory into this many NUMA nodes; 0 or 1:
	// one.
	NUMA int
	// Zones and Racks spread the nodes over topology labels zone-0..
	// and rack-0.. (racks numbered within the cell); 0: no such label.
	Zones, Racks int
	// Labels are added to every node.
	Labels map[string]string
}

// Defaults of Shape.
const (
	DefaultCPUMilli    = 16_000
	DefaultMemoryBytes = 64 << 30
	DefaultDiskBytes   = 500 << 30
	DefaultNetMbps     = 10_000
)

func (s Shape) withDefaults() Shape {
	if s.CPUMilli <= 0 {
		s.CPUMilli = DefaultCPUMilli
	}
	if s.MemoryBytes <= 0 {
		s.MemoryBytes = DefaultMemoryBytes
	}
	if s.DiskBytes <= 0 {
		s.DiskBytes = DefaultDiskBytes
	}
	if s.NetMbps <= 0 {
		s.NetMbps = DefaultNetMbps
	}
	if s.NUMA <= 0 {
		s.NUMA = 1
	}
	return s
}

// NodeID is the id (and name) of the i-th simulated node under prefix. Ids
// are stable, so a nodesim run again with the same prefix comes back as the
// same nodes instead of adding new ones.
func NodeID(prefix string, i int) string { return fmt.Sprintf("%s-%06d", prefix, i) }

// Node builds the i-th node of the shape. It is a pure function.
func (s Shape) Node(prefix string, i int) *api.Node {
	s = s.withDefaults()
	id := NodeID(prefix, i)
	labels := map[string]string{api.LabelNode: id}
	if s.Zones > 0 {
		labels[api.LabelZone] = fmt.Sprintf("zone-%d", i%s.Zones)
	}
	if s.Racks > 0 {
		labels[api.LabelRack] = fmt.Sprintf("rack-%d", i%s.Racks)
	}
	maps.Copy(labels, s.Labels)
	n := &api.Node{ID: id, Name: id, Status: api.NodeReady, Labels: labels,
		Capacity: api.Resources{CPUMilli: s.CPUMilli, MemoryBytes: s.MemoryBytes, DiskBytes: s.DiskBytes, NetMbps: s.NetMbps}}
	cores := int(s.CPUMilli / 1000)
	if cores < s.NUMA {
		return n // too few whole cores to lay out NUMA nodes: declare none
	}
	for z := range s.NUMA {
		nu := api.NUMANode{ID: z, MemoryBytes: s.MemoryBytes / int64(s.NUMA)}
		for c := z * cores / s.NUMA; c < (z+1)*cores/s.NUMA; c++ {
			nu.CPUs = append(nu.CPUs, c)
		}
		n.NUMA = append(n.NUMA, nu)
	}
	return n
}
