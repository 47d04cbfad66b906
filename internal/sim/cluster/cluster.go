package cluster

import (
	"errors"
	"fmt"
	"math/bits"

	"github.com/strata-dev/strata/internal/sim/trace"
)

// Sentinel errors returned by Assign, Release and the node operations.
var (
	// ErrOvercommit: the placement needs more than the node has free.
	ErrOvercommit = errors.New("placement would overcommit the node")
	// ErrBadPlacement: the placement does not match the pod's request (wrong
	// GPU count or share, GPU model not accepted, node index out of range, node down).
	ErrBadPlacement = errors.New("placement does not match the pod")
	// ErrUnknownAlloc: the allocation does not exist or was already released.
	ErrUnknownAlloc = errors.New("unknown or released allocation")
)

// GPUSet is a set of GPU indices on one node (a node has at most 64 GPUs).
type GPUSet uint64

// Has reports whether GPU i is in the set.
func (s GPUSet) Has(i int) bool { return s&(1<<uint(i)) != 0 }

// With returns the set plus GPU i.
func (s GPUSet) With(i int) GPUSet { return s | 1<<uint(i) }

// Len is the number of GPUs in the set.
func (s GPUSet) Len() int { return bits.OnesCount64(uint64(s)) }

// Placement is a policy's decision for one pod: the node and the GPUs it
// takes; each GPU gives Milli (the pod's share, or 1000 for whole GPUs).
type Placement struct {
	Node  int
	GPUs  GPUSet
	Milli int64
}

// Placer decides where a pod goes. Place must not modify the cluster; it
// returns ok=false when no node fits (a result, not an error). A Placer may
// keep private state (a seeded random source, score caches) and is therefore
// not safe for concurrent use; it never blocks.
type Placer interface {
	Place(c *Cluster, p *trace.Pod) (Placement, bool)
}

// BatchPlacer is implemented by placers that decide for several pods of
// one request at once, the way the server's scheduler places the replicas
// of one workload in one evaluation. PlaceAll returns placements for a
// prefix of pods, in order, each made as if the ones before it were
// already assigned: the pods after that prefix fit nowhere. Like Place it
// must not modify the cluster.
type BatchPlacer interface {
	Placer
	PlaceAll(c *Cluster, pods []*trace.Pod) []Placement
}

// NodeState is one node's capacity and what is left of it. Policies read it
// through Cluster.Node and must treat it as read-only.
type NodeState struct {
	Name     string
	Model    string // GPU model, "" for a CPU-only node
	ModelID  int    // index of Model in Cluster.Models
	CPUCap   int64
	MemCap   int64
	CPUFree  int64
	MemFree  int64
	GPUFree  []int64 // free milli-GPU of each GPU, 0..1000
	Up       bool
	Version  uint64    // changes whenever the free resources change
	Allocs   []AllocID // live allocations on the node
	gpuTotal int64     // sum of GPUFree, kept incrementally
}

// GPUFreeTotal is the node's free milli-GPU summed over its GPUs.
func (n *NodeState) GPUFreeTotal() int64 { return n.gpuTotal }

// FullyFreeGPUs counts the node's GPUs with nothing allocated.
func (n *NodeState) FullyFreeGPUs() int {
	k := 0
	for _, f := range n.GPUFree {
		if f == trace.MilliPerGPU {
			k++
		}
	}
	return k
}

// AllocID names one allocation in a Cluster.
type AllocID int32

// Alloc is a pod placed on a node.
type Alloc struct {
	Pod *trace.Pod
	Placement
	Live bool
	// CPUMilli and MemoryMiB are what the allocation holds: the pod's
	// request when it was placed, or what ResizeAlloc made of it.
	CPUMilli  int64
	MemoryMiB int64
}

// Resources is a CPU, memory and GPU amount.
type Resources struct {
	CPUMilli  int64 `json:"cpuMilli"`
	MemoryMiB int64 `json:"memoryMiB"`
	GPUMilli  int64 `json:"gpuMilli"`
}

// Cluster is the cell being simulated. It is not safe for concurrent use.
type Cluster struct {
	nodes    []NodeState
	allocs   []Alloc
	models   []string
	capacity Resources // of nodes that are up
	used     Resources
	maxNode  Resources // per-node maxima over all nodes: normalizers for scores
	// changed logs the nodes whose state changed, in order, with repeats;
	// changedBase is the number of entries dropped from its front.
	changed     []int32
	changedBase uint64
	// jobs holds, per job, where its pods run (jobs.go).
	jobs map[int64]*jobNodes
}

// New builds a cluster with every node up and empty.
func New(nodes []trace.Node) (*Cluster, error) {
	c := &Cluster{nodes: make([]NodeState, len(nodes))}
	modelIDs := map[string]int{}
	for i := range nodes {
		tn := &nodes[i]
		if tn.GPUs < 0 || tn.GPUs > trace.MaxGPUsPerNode || tn.CPUMilli < 0 || tn.MemoryMiB < 0 {
			return nil, fmt.Errorf("node %q: bad capacity (%d GPUs, %d milli-CPU, %d MiB)", tn.Name, tn.GPUs, tn.CPUMilli, tn.MemoryMiB)
		}
		id, ok := modelIDs[tn.GPUModel]
		if !ok {
			id = len(c.models)
			modelIDs[tn.GPUModel] = id
			c.models = append(c.models, tn.GPUModel)
		}
		n := &c.nodes[i]
		*n = NodeState{Name: tn.Name, Model: tn.GPUModel, ModelID: id, CPUCap: tn.CPUMilli, MemCap: tn.MemoryMiB,
			CPUFree: tn.CPUMilli, MemFree: tn.MemoryMiB, GPUFree: make([]int64, tn.GPUs), Up: true}
		for g := range n.GPUFree {
			n.GPUFree[g] = trace.MilliPerGPU
		}
		n.gpuTotal = int64(tn.GPUs) * trace.MilliPerGPU
		c.capacity.add(n.CPUCap, n.MemCap, n.gpuTotal)
		c.maxNode.CPUMilli = max(c.maxNode.CPUMilli, n.CPUCap)
		c.maxNode.MemoryMiB = max(c.maxNode.MemoryMiB, n.MemCap)
		c.maxNode.GPUMilli = max(c.maxNode.GPUMilli, n.gpuTotal)
	}
	return c, nil
}

func (r *Resources) add(cpu, mem, gpu int64) {
	r.CPUMilli += cpu
	r.MemoryMiB += mem
	r.GPUMilli += gpu
}

// touch records a change of node i: its Version moves and the change log
// names it. The log keeps at least the last 4 × nodes changes.
func (c *Cluster) touch(i int) {
	c.nodes[i].Version++
	if keep := max(1024, 4*len(c.nodes)); len(c.changed) >= 2*keep {
		drop := len(c.changed) - keep
		c.changed = c.changed[:copy(c.changed, c.changed[drop:])]
		c.changedBase += uint64(drop)
	}
	c.changed = append(c.changed, int32(i))
}

// Changes returns the nodes whose state (free resources, capacity, up or
// down) changed since cursor, in order and with repeats, and the cursor to
// pass next time; cursor 0 asks for every change since New. complete is
// false when the log no longer reaches back to cursor: the caller must
// then look at every node. The slice is the cluster's; it is valid until
// the cluster next changes. A caller that keeps up (a placer reading it on
// every Place) never sees an incomplete answer.
func (c *Cluster) Changes(cursor uint64) (nodes []int32, next uint64, complete bool) {
	next = c.changedBase + uint64(len(c.changed))
	if cursor < c.changedBase {
		return nil, next, false
	}
	return c.changed[cursor-c.changedBase:], next, true
}

// ChangeCursor is the cursor of the latest change: Changes(ChangeCursor())
// is empty until the cluster changes again.
func (c *Cluster) ChangeCursor() uint64 { return c.changedBase + uint64(len(c.changed)) }

// NumNodes is the number of nodes, up or down.
func (c *Cluster) NumNodes() int { return len(c.nodes) }

// Node returns node i for reading.
func (c *Cluster) Node(i int) *NodeState { return &c.nodes[i] }

// Models lists the distinct GPU models, indexed by NodeState.ModelID.
func (c *Cluster) Models() []string { return c.models }

// Capacity is the total capacity of the nodes that are up.
func (c *Cluster) Capacity() Resources { return c.capacity }

// Used is what live allocations hold.
func (c *Cluster) Used() Resources { return c.used }

// MaxNode is the largest per-node capacity of each resource, over all nodes.
func (c *Cluster) MaxNode() Resources { return c.maxNode }

// Alloc returns an allocation for reading.
func (c *Cluster) Alloc(id AllocID) *Alloc { return &c.allocs[id] }

// Fits reports whether pod p could be placed on node i now: the node is up,
// has the CPU and memory, accepts the pod's GPU model and has NumGPU GPUs
// each with at least the pod's per-GPU milli free.
func (c *Cluster) Fits(i int, p *trace.Pod) bool {
	n := &c.nodes[i]
	if !n.Up || n.CPUFree < p.CPUMilli || n.MemFree < p.MemoryMiB {
		return false
	}
	if p.NumGPU == 0 {
		return !c.Conflicts(i, p)
	}
	if len(n.GPUFree) < p.NumGPU || n.gpuTotal < p.GPURequestMilli() || !p.AcceptsModel(n.Model) {
		return false
	}
	need, k := p.PerGPUMilli(), 0
	for _, f := range n.GPUFree {
		if f >= need {
			if k++; k >= p.NumGPU {
				return !c.Conflicts(i, p)
			}
		}
	}
	return false
}

// Assign places p as pl says, after re-checking it against the node.
func (c *Cluster) Assign(p *trace.Pod, pl Placement) (AllocID, error) {
	if pl.Node < 0 || pl.Node >= len(c.nodes) {
		return -1, fmt.Errorf("%w: node %d out of range", ErrBadPlacement, pl.Node)
	}
	n := &c.nodes[pl.Node]
	switch {
	case !n.Up:
		return -1, fmt.Errorf("%w: node %s is down", ErrBadPlacement, n.Name)
	case pl.GPUs.Len() != p.NumGPU || (p.NumGPU > 0 && pl.Milli != p.PerGPUMilli()) || (p.NumGPU == 0 && pl.Milli != 0):
		return -1, fmt.Errorf("%w: pod %s wants %d GPUs of %d milli, placement gives %d of %d",
			ErrBadPlacement, p.Name, p.NumGPU, p.PerGPUMilli(), pl.GPUs.Len(), pl.Milli)
	case p.NumGPU > 0 && !p.AcceptsModel(n.Model):
		return -1, fmt.Errorf("%w: pod %s does not accept GPU model %q", ErrBadPlacement, p.Name, n.Model)
	case pl.GPUs>>uint(len(n.GPUFree)) != 0:
		return -1, fmt.Errorf("%w: GPU index beyond node %s's %d GPUs", ErrBadPlacement, n.Name, len(n.GPUFree))
	case n.CPUFree < p.CPUMilli || n.MemFree < p.MemoryMiB:
		return -1, fmt.Errorf("%w: %s on %s", ErrOvercommit, p.Name, n.Name)
	case c.Conflicts(pl.Node, p):
		return -1, fmt.Errorf("%w: %s on %s breaks its job's different-machine constraint", ErrBadPlacement, p.Name, n.Name)
	}
	for g := range n.GPUFree {
		if pl.GPUs.Has(g) && n.GPUFree[g] < pl.Milli {
			return -1, fmt.Errorf("%w: GPU %d of %s has %d milli free, %s needs %d", ErrOvercommit, g, n.Name, n.GPUFree[g], p.Name, pl.Milli)
		}
	}
	for g := range n.GPUFree {
		if pl.GPUs.Has(g) {
			n.GPUFree[g] -= pl.Milli
		}
	}
	gpu := pl.Milli * int64(p.NumGPU)
	n.CPUFree -= p.CPUMilli
	n.MemFree -= p.MemoryMiB
	n.gpuTotal -= gpu
	c.touch(pl.Node)
	c.used.add(p.CPUMilli, p.MemoryMiB, gpu)
	id := AllocID(len(c.allocs))
	c.allocs = append(c.allocs, Alloc{Pod: p, Placement: pl, Live: true, CPUMilli: p.CPUMilli, MemoryMiB: p.MemoryMiB})
	n.Allocs = append(n.Allocs, id)
	c.countJob(p, pl.Node, 1)
	return id, nil
}

// Release frees an allocation's resources.
func (c *Cluster) Release(id AllocID) error {
	if id < 0 || int(id) >= len(c.allocs) || !c.allocs[id].Live {
		return fmt.Errorf("%w: %d", ErrUnknownAlloc, id)
	}
	a := &c.allocs[id]
	a.Live = false
	n := &c.nodes[a.Node]
	for g := range n.GPUFree {
		if a.GPUs.Has(g) {
			n.GPUFree[g] += a.Milli
		}
	}
	gpu := a.Milli * int64(a.Pod.NumGPU)
	n.CPUFree += a.CPUMilli
	n.MemFree += a.MemoryMiB
	n.gpuTotal += gpu
	c.touch(a.Node)
	c.used.add(-a.CPUMilli, -a.MemoryMiB, -gpu)
	c.countJob(a.Pod, a.Node, -1)
	for k, other := range n.Allocs {
		if other == id {
			last := len(n.Allocs) - 1
			n.Allocs[k] = n.Allocs[last]
			n.Allocs = n.Allocs[:last]
			break
		}
	}
	return nil
}

// ResizeAlloc changes what a live allocation holds to cpuMilli and memMiB,
// on its node. It refuses (ErrOvercommit) when the node lacks the room:
// the caller decides whether the pod moves.
func (c *Cluster) ResizeAlloc(id AllocID, cpuMilli, memMiB int64) error {
	if id < 0 || int(id) >= len(c.allocs) || !c.allocs[id].Live {
		return fmt.Errorf("%w: %d", ErrUnknownAlloc, id)
	}
	a := &c.allocs[id]
	n := &c.nodes[a.Node]
	dCPU, dMem := cpuMilli-a.CPUMilli, memMiB-a.MemoryMiB
	if dCPU > n.CPUFree || dMem > n.MemFree {
		return fmt.Errorf("%w: resize %s to %d milli-CPU, %d MiB on %s", ErrOvercommit, a.Pod.Name, cpuMilli, memMiB, n.Name)
	}
	n.CPUFree -= dCPU
	n.MemFree -= dMem
	a.CPUMilli, a.MemoryMiB = cpuMilli, memMiB
	c.used.add(dCPU, dMem, 0)
	c.touch(a.Node)
	return nil
}

// SetDown takes node i out of the cell and releases its allocations,
// returning them (the caller decides whether their pods are re-queued).
func (c *Cluster) SetDown(i int) ([]AllocID, error) {
	n := &c.nodes[i]
	if !n.Up {
		return nil, nil
	}
	evicted := append([]AllocID(nil), n.Allocs...)
	for _, id := range evicted {
		if err := c.Release(id); err != nil {
			return nil, err
		}
	}
	n.Up = false
	c.touch(i)
	c.capacity.add(-n.CPUCap, -n.MemCap, -int64(len(n.GPUFree))*trace.MilliPerGPU)
	return evicted, nil
}

// SetUp brings node i (back) into the cell with the given CPU and memory
// capacity; it must be empty, which a down node always is.
func (c *Cluster) SetUp(i int, cpuMilli, memMiB int64) error {
	n := &c.nodes[i]
	if n.Up {
		return c.Resize(i, cpuMilli, memMiB)
	}
	n.CPUCap, n.MemCap, n.CPUFree, n.MemFree = cpuMilli, memMiB, cpuMilli, memMiB
	n.Up = true
	c.touch(i)
	c.capacity.add(n.CPUCap, n.MemCap, int64(len(n.GPUFree))*trace.MilliPerGPU)
	c.maxNode.CPUMilli = max(c.maxNode.CPUMilli, cpuMilli)
	c.maxNode.MemoryMiB = max(c.maxNode.MemoryMiB, memMiB)
	return nil
}

// Resize changes an up node's CPU and memory capacity. It refuses to shrink
// below what is allocated (ErrOvercommit): the invariant wins over the trace.
func (c *Cluster) Resize(i int, cpuMilli, memMiB int64) error {
	n := &c.nodes[i]
	usedCPU, usedMem := n.CPUCap-n.CPUFree, n.MemCap-n.MemFree
	if cpuMilli < usedCPU || memMiB < usedMem {
		return fmt.Errorf("%w: resize %s below its allocations", ErrOvercommit, n.Name)
	}
	if n.Up {
		c.capacity.add(cpuMilli-n.CPUCap, memMiB-n.MemCap, 0)
	}
	n.CPUCap, n.MemCap = cpuMilli, memMiB
	n.CPUFree, n.MemFree = cpuMilli-usedCPU, memMiB-usedMem
	c.touch(i)
	c.maxNode.CPUMilli = max(c.maxNode.CPUMilli, cpuMilli)
	c.maxNode.MemoryMiB = max(c.maxNode.MemoryMiB, memMiB)
	return nil
}

// BestFitGPU is the GPU with the least free milli that still has need; -1
// when none has. Ties go to the lowest index.
func (n *NodeState) BestFitGPU(need int64) int {
	best := -1
	for g, f := range n.GPUFree {
		if f >= need && (best < 0 || f < n.GPUFree[best]) {
			best = g
		}
	}
	return best
}

// FirstFreeGPUs is the k lowest-indexed fully free GPUs, or ok=false.
func (n *NodeState) FirstFreeGPUs(k int) (GPUSet, bool) {
	var s GPUSet
	for g, f := range n.GPUFree {
		if k == 0 {
			break
		}
		if f == trace.MilliPerGPU {
			s = s.With(g)
			k--
		}
	}
	return s, k == 0
}

// DefaultGPUs is the GPU choice shared by most policies: the best-fit GPU for
// a sharing pod, the lowest-indexed fully free GPUs for whole-GPU pods.
func (n *NodeState) DefaultGPUs(p *trace.Pod) GPUSet {
	switch {
	case p.NumGPU == 0:
		return 0
	case p.IsShare():
		if g := n.BestFitGPU(p.GPUMilli); g >= 0 {
			return GPUSet(0).With(g)
		}
		return 0
	default:
		s, _ := n.FirstFreeGPUs(p.NumGPU)
		return s
	}
}

// PlacementFor builds the placement of p on node i using the given GPUs.
func PlacementFor(i int, p *trace.Pod, gpus GPUSet) Placement {
	return Placement{Node: i, GPUs: gpus, Milli: p.PerGPUMilli()}
}
