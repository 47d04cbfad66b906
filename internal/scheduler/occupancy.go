package scheduler

import (
	"fmt"
	"math"

	"github.com/strata-dev/strata/api"
)

// maxCPUID bounds the cpu-id lookup table; ids above it are ignored.
const maxCPUID = 1 << 16

// unlimitedMem marks a NUMA node whose memory size is unknown.
const unlimitedMem = math.MaxInt64

// nodeDetail is the occupancy of a node's exclusive cores, NUMA-local memory
// and GPUs, in flat slices indexed by position (no maps). The tables that
// only depend on the node's NUMA layout (cpuPos, coreNUMA, coreCPU) come
// from a nodeLayout and are shared, never written.
type nodeDetail struct {
	node      *api.Node
	cpuPos    []int32 // cpu id → core position, -1 if absent
	coreNUMA  []int32 // core position → NUMA index
	coreCPU   []int   // core position → cpu id
	coreTaken []bool
	numaFree  []int    // free cores per NUMA index
	numaMem   []int64  // memory left for pinned allocations per NUMA index
	gpuWhole  []bool   // GPU index → held whole
	gpuMilli  []int64  // GPU index → milli held by shares
	ports     []uint16 // ports held, sorted (ports.go)
	devTaken  []bool   // device index (node.Devices) → held (devices.go)
	// lingering are the ports of allocations this plan stops, sorted:
	// free, but their tasks may hold them a while yet (a shutdown delay),
	// so dynamic ports avoid them while others are free (ports.go).
	lingering []uint16
	// conflicted is set once apply found a conflict: release is then no
	// longer the inverse of apply.
	conflicted bool
}

// nodeLayout is what a node's detail starts from: its cores by position
// and NUMA node, and each NUMA node's cores and memory. It depends only on
// the node's NUMA fingerprint, so nodes of one shape share one (NodeIndex).
type nodeLayout struct {
	numa      []api.NUMANode // the fingerprint it was made from
	cpuPos    []int32
	coreNUMA  []int32
	coreCPU   []int
	numaCores []int
	numaMem   []int64
}

func newLayout(n *api.Node) *nodeLayout {
	maxID := -1
	for _, nn := range n.NUMA {
		for _, cpu := range nn.CPUs {
			if cpu <= maxCPUID {
				maxID = max(maxID, cpu)
			}
		}
	}
	l := &nodeLayout{
		numa:      n.NUMA,
		cpuPos:    make([]int32, maxID+1),
		numaCores: make([]int, len(n.NUMA)),
		numaMem:   make([]int64, len(n.NUMA)),
	}
	for i := range l.cpuPos {
		l.cpuPos[i] = -1
	}
	for ni, nn := range n.NUMA {
		l.numaMem[ni] = nn.MemoryBytes
		if nn.MemoryBytes <= 0 {
			l.numaMem[ni] = unlimitedMem
		}
		for _, cpu := range nn.CPUs {
			if cpu < 0 || cpu > maxCPUID || l.cpuPos[cpu] >= 0 {
				continue // malformed or duplicate id: not schedulable
			}
			l.cpuPos[cpu] = int32(len(l.coreCPU))
			l.coreNUMA = append(l.coreNUMA, int32(ni))
			l.coreCPU = append(l.coreCPU, cpu)
			l.numaCores[ni]++
		}
	}
	return l
}

func newNodeDetail(n *api.Node) *nodeDetail { return newLayout(n).detail(n) }

// detail returns an empty detail of node n, which has layout l.
func (l *nodeLayout) detail(n *api.Node) *nodeDetail {
	return &nodeDetail{
		node:      n,
		cpuPos:    l.cpuPos,
		coreNUMA:  l.coreNUMA,
		coreCPU:   l.coreCPU,
		coreTaken: make([]bool, len(l.coreCPU)),
		numaFree:  append([]int(nil), l.numaCores...),
		numaMem:   append([]int64(nil), l.numaMem...),
		gpuWhole:  make([]bool, len(n.GPUs)),
		gpuMilli:  make([]int64, len(n.GPUs)),
		devTaken:  make([]bool, len(n.Devices)),
	}
}

func (d *nodeDetail) corePos(cpu int) int {
	if cpu < 0 || cpu >= len(d.cpuPos) {
		return -1
	}
	return int(d.cpuPos[cpu])
}

func (d *nodeDetail) numaIndex(id int) int {
	for i := range d.node.NUMA {
		if d.node.NUMA[i].ID == id {
			return i
		}
	}
	return -1
}

func (d *nodeDetail) gpuIndex(id string) int {
	for i := range d.node.GPUs {
		if d.node.GPUs[i].ID == id {
			return i
		}
	}
	return -1
}

// gpuFree reports whether GPU i can be handed out whole.
func (d *nodeDetail) gpuFree(i int) bool { return !d.gpuWhole[i] && d.gpuMilli[i] == 0 }

// apply marks an allocation's assignment as taken. It returns "" or the
// first conflict found (an unknown or doubly assigned core or GPU, a share
// pushing a GPU past 1000 milli, NUMA memory overcommitted); the occupancy
// is updated either way so that later conflicts are seen too.
func (d *nodeDetail) apply(a *api.Allocation) string {
	var conflict string
	note := func(format string, args ...any) {
		if conflict == "" {
			conflict = fmt.Sprintf(format, args...)
		}
	}
	asg := &a.Assignment
	d.applyPorts(a, note)
	d.applyDevices(a, note)
	for _, cpu := range asg.CPUs {
		switch p := d.corePos(cpu); {
		case p < 0:
			note("cpu %d not on node", cpu)
		case d.coreTaken[p]:
			note("cpu %d assigned twice", cpu)
		default:
			d.coreTaken[p] = true
			d.numaFree[d.coreNUMA[p]]--
		}
	}
	if asg.NUMANode >= 0 && len(asg.CPUs) > 0 {
		switch nu := d.numaIndex(asg.NUMANode); {
		case nu < 0:
			note("numa node %d not on node", asg.NUMANode)
		default:
			for _, cpu := range asg.CPUs {
				if p := d.corePos(cpu); p >= 0 && int(d.coreNUMA[p]) != nu {
					note("cpu %d not on numa node %d", cpu, asg.NUMANode)
				}
			}
			if d.numaMem[nu] == unlimitedMem {
				break
			}
			d.numaMem[nu] -= a.Resources.MemoryBytes
			if d.numaMem[nu] < 0 {
				note("numa node %d memory overcommitted", asg.NUMANode)
			}
		}
	}
	if asg.GPUMilli > 0 {
		if len(asg.GPUs) != 1 {
			note("gpu share names %d gpus, want 1", len(asg.GPUs))
		}
		if len(asg.GPUs) > 0 {
			switch g := d.gpuIndex(asg.GPUs[0]); {
			case g < 0:
				note("gpu %s not on node", asg.GPUs[0])
			case d.gpuWhole[g]:
				note("gpu %s assigned whole and shared", asg.GPUs[0])
			default:
				d.gpuMilli[g] += asg.GPUMilli
				if d.gpuMilli[g] > 1000 {
					note("gpu %s shared milli %d > 1000", asg.GPUs[0], d.gpuMilli[g])
				}
			}
		}
		d.conflicted = d.conflicted || conflict != ""
		return conflict
	}
	for _, id := range asg.GPUs {
		switch g := d.gpuIndex(id); {
		case g < 0:
			note("gpu %s not on node", id)
		case !d.gpuFree(g):
			note("gpu %s assigned twice", id)
		default:
			d.gpuWhole[g] = true
		}
	}
	d.conflicted = d.conflicted || conflict != ""
	return conflict
}

// release undoes apply(a) for an allocation applied without conflict: its
// cores, NUMA memory, GPU share or whole GPUs are free again. Callers
// must not release on a conflicted detail.
func (d *nodeDetail) release(a *api.Allocation) {
	asg := &a.Assignment
	d.releasePorts(a)
	d.releaseDevices(a)
	for _, cpu := range asg.CPUs {
		if p := d.corePos(cpu); p >= 0 && d.coreTaken[p] {
			d.coreTaken[p] = false
			d.numaFree[d.coreNUMA[p]]++
		}
	}
	if asg.NUMANode >= 0 && len(asg.CPUs) > 0 {
		if nu := d.numaIndex(asg.NUMANode); nu >= 0 && d.numaMem[nu] != unlimitedMem {
			d.numaMem[nu] += a.Resources.MemoryBytes
		}
	}
	if asg.GPUMilli > 0 {
		if len(asg.GPUs) > 0 {
			if g := d.gpuIndex(asg.GPUs[0]); g >= 0 {
				d.gpuMilli[g] -= asg.GPUMilli
			}
		}
		return
	}
	for _, id := range asg.GPUs {
		if g := d.gpuIndex(id); g >= 0 {
			d.gpuWhole[g] = false
		}
	}
}

// clone returns a copy of d.
func (d *nodeDetail) clone() *nodeDetail {
	c := &nodeDetail{}
	d.cloneInto(c)
	c.lingering = append([]uint16(nil), d.lingering...)
	return c
}

// cloneInto makes dst a copy of d, reusing dst's slices. The node's core
// and cpu-id tables never change and are shared.
func (d *nodeDetail) cloneInto(dst *nodeDetail) {
	dst.node, dst.cpuPos, dst.coreNUMA, dst.coreCPU = d.node, d.cpuPos, d.coreNUMA, d.coreCPU
	dst.coreTaken = append(dst.coreTaken[:0], d.coreTaken...)
	dst.numaFree = append(dst.numaFree[:0], d.numaFree...)
	dst.numaMem = append(dst.numaMem[:0], d.numaMem...)
	dst.gpuWhole = append(dst.gpuWhole[:0], d.gpuWhole...)
	dst.gpuMilli = append(dst.gpuMilli[:0], d.gpuMilli...)
	dst.ports = append(dst.ports[:0], d.ports...)
	dst.devTaken = append(dst.devTaken[:0], d.devTaken...)
	dst.conflicted = d.conflicted
}
