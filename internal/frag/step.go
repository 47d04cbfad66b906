package frag

import (
	"math"
	"slices"
)

// This file is the mathematics of the two fragmentation-aware policies,
// kept once: the simulator's paper-faithful FGD and FGD+
// (internal/sim/policy) and the server's fgd plugin
// (internal/scheduler/fgd) are adapters that feed these functions their
// own node and task types and combine the results as their frameworks
// score (a whole 0..100 score with a seeded tie rule in the simulator,
// bands of one float in the scheduler). A new policy built on FGD's
// measure starts here too.

// Want is one task's ask in the measure's terms: CPU, and either whole
// GPUs or a share of one GPU (never both).
type Want struct {
	CPUMilli   int64
	GPUs       int   // whole GPUs; 0 for a share or a CPU-only task
	ShareMilli int64 // milli-GPU of one GPU for a share; 0 otherwise
}

// GPUMilli is the GPU the task takes in all, in milli-GPU.
func (w Want) GPUMilli() int64 { return int64(w.GPUs)*1000 + w.ShareMilli }

// Node is a node as the measure reads it: its GPU model and what is free.
type Node struct {
	// ModelID is the node's GPU model as Bind numbered it; -1 when the
	// distribution was not bound to it, and Model is read instead.
	ModelID int
	Model   string
	CPUFree int64
	GPUFree []int64 // free milli-GPU per GPU, 0..1000
}

// NodeFrag is n's fragmentation in milli-GPU: Frag for a bound model,
// otherwise every type's model list is checked directly (FragOf).
func (d *Distribution) NodeFrag(n *Node) float64 {
	if n.ModelID >= 0 {
		return d.Frag(n.ModelID, n.CPUFree, n.GPUFree)
	}
	return d.unboundFrag(n.Model, n.CPUFree, n.GPUFree)
}

// Step is FGD's verdict on placing one task asking want on node n, whose
// fragmentation now is before (NodeFrag; callers cache it): the whole
// 0..100 score of the fragmentation decrease (Score), and for a share the
// GPU that earns it, -1 otherwise or when no GPU has room.
//
// A share tries every GPU with room for it (one GPU per distinct free
// level: GPUs with equal free milli fragment alike) and keeps the first
// with the best score; whole GPUs are taken from the fully free ones, lowest
// index first, which are interchangeable. eligible, when not nil, says which
// GPUs (by index into n.GPUFree) may serve the task at all, such as those
// of a model the task accepts. scratch is working memory of at least
// len(n.GPUFree) values; n is not modified.
func (d *Distribution) Step(n *Node, before float64, want Want, eligible func(gpu int) bool, scratch []int64) (score float64, gpu int) {
	gpus := scratch[:len(n.GPUFree)]
	copy(gpus, n.GPUFree)
	after := Node{ModelID: n.ModelID, Model: n.Model, CPUFree: n.CPUFree - want.CPUMilli, GPUFree: gpus}
	if want.ShareMilli > 0 {
		best, bestGPU := 0.0, -1
		for g, free := range n.GPUFree {
			if free < want.ShareMilli || (eligible != nil && !eligible(g)) || sameLevelBefore(n.GPUFree, g, eligible) {
				continue
			}
			gpus[g] -= want.ShareMilli
			s := Score(before - d.NodeFrag(&after))
			gpus[g] += want.ShareMilli
			if bestGPU < 0 || s > best {
				best, bestGPU = s, g
			}
		}
		return best, bestGPU
	}
	for g, taken := 0, 0; g < len(gpus) && taken < want.GPUs; g++ {
		if gpus[g] == 1000 && (eligible == nil || eligible(g)) {
			gpus[g] = 0
			taken++
		}
	}
	return Score(before - d.NodeFrag(&after)), -1
}

// sameLevelBefore reports whether an eligible GPU before g has g's free
// milli, and so the same verdict.
func sameLevelBefore(free []int64, g int, eligible func(int) bool) bool {
	for k := range g {
		if free[k] == free[g] && (eligible == nil || eligible(k)) {
			return true
		}
	}
	return false
}

// CPUKey is FGD+'s second key, in [-1, 1], higher better; it decides only
// among nodes FGD scores alike. A task without GPUs prefers the node with
// the least idle GPU (CPU on a node whose GPUs are taken serves nothing
// but CPU tasks); a GPU task prefers the node where it most reduces the
// imbalance |free CPU − cpuPerGPU × free GPU|, so that neither GPUs
// without CPU nor CPU without GPUs is left behind. idleGPU is the node's
// free milli-GPU; maxCPU and maxGPU are the largest node's capacities
// (milli-CPU, milli-GPU), which keep the key within its band.
func CPUKey(cpuFree, idleGPU int64, want Want, cpuPerGPU float64, maxCPU, maxGPU int64) float64 {
	gpuWant := want.GPUMilli()
	if gpuWant == 0 {
		if maxGPU == 0 {
			return 0
		}
		return -float64(idleGPU) / float64(maxGPU)
	}
	r := cpuPerGPU
	before := math.Abs(float64(cpuFree) - r*float64(idleGPU))
	after := math.Abs(float64(cpuFree-want.CPUMilli) - r*float64(idleGPU-gpuWant))
	// |after − before| ≤ |CPU − r × GPU| of the task ≤ the bound below.
	return (before - after) / (float64(maxCPU) + r*float64(maxGPU) + 1)
}

// CPUPerGPU is r of CPUKey: the milli-CPU the GPU shapes ask for per
// milli-GPU, weighted by their counts (0 without GPU shapes).
func CPUPerGPU(shapes []Shape) float64 {
	var cpu, gpu float64
	for i := range shapes {
		s := &shapes[i]
		if s.NumGPU > 0 {
			cpu += float64(s.CPUMilli) * s.Count
			gpu += float64(int64(s.NumGPU)*s.PerGPUMilli) * s.Count
		}
	}
	return cpu / max(gpu, 1)
}

// unboundFrag is the fragmentation of a node whose model Bind did not
// number: each type's model list is checked by name.
func (d *Distribution) unboundFrag(model string, cpuFree int64, gpuFree []int64) float64 {
	var idle int64
	for _, f := range gpuFree {
		idle += f
	}
	if idle == 0 {
		return 0
	}
	var frag float64
	for t := range d.Types {
		ty := &d.Types[t]
		accepts := model != "" && (len(ty.Spec) == 0 || slices.Contains(ty.Spec, model))
		frag += ty.Weight * float64(ty.unusable(accepts, cpuFree, gpuFree, idle))
	}
	return frag
}
