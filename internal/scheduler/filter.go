package scheduler

// Rejection reasons shown to users, counted per node in GroupFailure.Reasons.
const (
	reasonNotReady      = "node not ready"
	reasonCPU           = "insufficient cpu"
	reasonMemory        = "insufficient memory"
	reasonDisk          = "insufficient disk"
	reasonGPU           = "insufficient gpu"
	reasonBandwidth     = "insufficient bandwidth"
	reasonMixedGPU      = "gpu request mixes whole gpus and a share"
	reasonShareTooLarge = "gpu share over 1000 milli"
)

// filter is one feasibility predicate of the pipeline. check returns "" when
// node i of the cell can take one more replica of g now, or the reason it
// cannot (user-facing text). Filters run in the order compileGroup lists
// them and the first rejection is the node's reason. A filter may load the
// node's detail but must not change any accounting. Capacity filters
// (resources, NUMA, GPU fit) are the ones preemption could satisfy by
// evicting lower-priority work; the others are hard.
type filter interface {
	check(g *group, c *cell, i int) string
}

// readyFilter rejects nodes that do not accept placements (down, draining).
type readyFilter struct{}

func (readyFilter) check(_ *group, c *cell, i int) string {
	if !c.at(i).ready {
		return reasonNotReady
	}
	return ""
}

// requireFilter enforces the group's hard label rules, in their order.
type requireFilter struct{}

func (requireFilter) check(g *group, c *cell, i int) string {
	for j := range g.require {
		if !g.require[j].matches(c, i) {
			return g.require[j].failReason
		}
	}
	return ""
}

// resourceFilter checks every aggregate dimension against what is free on
// the node after this plan's stops and placements so far.
type resourceFilter struct{}

func (resourceFilter) check(g *group, c *cell, i int) string {
	want, free := &g.req.Resources, &c.at(i).free
	switch {
	case want.CPUMilli > free.CPUMilli:
		return reasonCPU
	case want.MemoryBytes > free.MemoryBytes:
		return reasonMemory
	case want.DiskBytes > free.DiskBytes:
		return reasonDisk
	case want.GPUs > free.GPUs:
		return reasonGPU
	case want.NetMbps > free.NetMbps:
		return reasonBandwidth
	}
	return ""
}

// gpuModelFilter rejects nodes with no GPU at all of an acceptable model.
// It reads only the node's fingerprint, not its occupancy.
type gpuModelFilter struct{}

func (gpuModelFilter) check(g *group, c *cell, i int) string {
	gpus := c.node(i).GPUs
	if len(gpus) == 0 {
		return reasonGPU
	}
	for k := range gpus {
		if g.acceptsModel(gpus[k].Model) {
			return ""
		}
	}
	return g.modelText
}

// numaFilter requires one NUMA node with enough whole free cores and, when
// its memory size is known, enough local memory for the group.
type numaFilter struct{}

func (numaFilter) check(g *group, c *cell, i int) string {
	if pickNUMA(g, c.detail(i)) < 0 {
		return g.numaText
	}
	return ""
}

// numaFits reports whether NUMA node nu can host the group's pinned cores.
func numaFits(g *group, d *nodeDetail, nu int) bool {
	return d.numaFree[nu] >= g.cores && d.numaMem[nu] >= g.req.Resources.MemoryBytes
}

// gpuFitFilter requires enough free whole GPUs of an acceptable model, or
// one acceptable GPU whose shares leave room for the group's share.
type gpuFitFilter struct{}

func (gpuFitFilter) check(g *group, c *cell, i int) string {
	switch {
	case g.gpus > 0 && g.gpuMilli > 0:
		return reasonMixedGPU
	case g.gpuMilli > 1000:
		return reasonShareTooLarge
	}
	d := c.detail(i)
	if g.gpuMilli > 0 {
		if pickShare(g, d, -1) < 0 {
			return reasonGPU
		}
		return ""
	}
	free := 0
	for k := range d.node.GPUs {
		if d.gpuFree(k) && g.acceptsModel(d.node.GPUs[k].Model) {
			free++
		}
	}
	if free < g.gpus {
		return reasonGPU
	}
	return ""
}
