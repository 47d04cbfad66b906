package scheduler

import (
	"slices"

	"github.com/strata-dev/strata/api"
)

// assign names the concrete hardware for one replica of g on node i, which
// the filters have just accepted: exact cores on one NUMA node, then GPUs,
// preferring GPUs attached to that NUMA node.
func (c *cell) assign(g *group, i int) api.Assignment {
	asg := api.Assignment{NUMANode: -1}
	if !g.needsDetail() {
		return asg
	}
	d := c.detail(i)
	asg.Ports = assignPorts(g, d)
	numaID := -1
	if g.cores > 0 {
		nu := pickNUMA(g, d)
		numaID = d.node.NUMA[nu].ID
		asg.NUMANode = numaID
		asg.CPUs = make([]int, 0, g.cores)
		for p := range d.coreCPU {
			if int(d.coreNUMA[p]) == nu && !d.coreTaken[p] {
				asg.CPUs = append(asg.CPUs, d.coreCPU[p])
				if len(asg.CPUs) == g.cores {
					break
				}
			}
		}
		slices.Sort(asg.CPUs)
	}
	asg.Devices = assignDevices(g, d, numaID)
	switch {
	case g.gpuMilli > 0:
		k := pickShare(g, d, numaID)
		if g.chooser != nil {
			k = g.chooseShare(c, i, d, k)
		}
		asg.GPUs = []string{d.node.GPUs[k].ID}
		asg.GPUMilli = g.gpuMilli
	case g.gpus > 0:
		asg.GPUs = pickWhole(g, d, numaID)
	}
	return asg
}

// pickNUMA returns the NUMA index to pin g on, or -1 when none fits. Among
// the NUMA nodes that fit it prefers one whose local GPUs can serve the
// group, then the one with the fewest free cores (best fit, keeping large
// holes for large requests), then the lowest index.
func pickNUMA(g *group, d *nodeDetail) int {
	best, bestLocal, bestFree := -1, false, 0
	for nu := range d.numaFree {
		if !numaFits(g, d, nu) {
			continue
		}
		local := gpusLocal(g, d, d.node.NUMA[nu].ID)
		free := d.numaFree[nu]
		if best < 0 || (local && !bestLocal) || (local == bestLocal && free < bestFree) {
			best, bestLocal, bestFree = nu, local, free
		}
	}
	return best
}

// gpusLocal reports whether the GPUs attached to NUMA node numaID alone can
// serve the group's GPU request (trivially true without one).
func gpusLocal(g *group, d *nodeDetail, numaID int) bool {
	switch {
	case g.gpuMilli > 0:
		k := pickShare(g, d, numaID)
		return k >= 0 && d.node.GPUs[k].NUMA == numaID
	case g.gpus > 0:
		n := 0
		for k := range d.node.GPUs {
			if d.node.GPUs[k].NUMA == numaID && d.gpuFree(k) && g.acceptsGPU(&d.node.GPUs[k]) {
				n++
			}
		}
		return n >= g.gpus
	}
	return true
}

// pickWhole returns g.gpus free acceptable GPU ids, those on NUMA node
// numaID first, otherwise in the node's order.
func pickWhole(g *group, d *nodeDetail, numaID int) []string {
	out := make([]string, 0, g.gpus)
	for pass := 0; pass < 2 && len(out) < g.gpus; pass++ {
		for k := range d.node.GPUs {
			gpu := &d.node.GPUs[k]
			local := numaID >= 0 && gpu.NUMA == numaID
			if (pass == 0) != local || !d.gpuFree(k) || !g.acceptsGPU(gpu) {
				continue
			}
			out = append(out, gpu.ID)
			if len(out) == g.gpus {
				break
			}
		}
	}
	return out
}

// pickShare returns the GPU index for a fractional share: the acceptable GPU
// not held whole where the share fits leaving the least room (best fit),
// preferring NUMA node numaID on ties, then the lowest index; -1 if none.
func pickShare(g *group, d *nodeDetail, numaID int) int {
	best, bestLeft, bestLocal := -1, int64(0), false
	for k := range d.node.GPUs {
		gpu := &d.node.GPUs[k]
		if d.gpuWhole[k] || !g.acceptsGPU(gpu) {
			continue
		}
		left := 1000 - d.gpuMilli[k] - g.gpuMilli
		if left < 0 {
			continue
		}
		local := numaID >= 0 && gpu.NUMA == numaID
		if best < 0 || left < bestLeft || (left == bestLeft && local && !bestLocal) {
			best, bestLeft, bestLocal = k, left, local
		}
	}
	return best
}

// chooseShare asks the group's ShareChooser which acceptable GPU with room
// for the share to use; fallback (the best fit) when it answers something
// else.
func (g *group) chooseShare(c *cell, i int, d *nodeDetail, fallback int) int {
	var candidates []int
	for k := range d.node.GPUs {
		if !d.gpuWhole[k] && g.acceptsGPU(&d.node.GPUs[k]) && d.gpuMilli[k]+g.gpuMilli <= 1000 {
			candidates = append(candidates, k)
		}
	}
	k := g.chooser.ChooseShare(&g.req, g.view(c, i), candidates)
	if !slices.Contains(candidates, k) {
		return fallback
	}
	return k
}
