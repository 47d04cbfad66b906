package rebalance

import (
	"fmt"
	"slices"
)

// Node is a node as the rebalancer sees it. CPU is in milli-CPU and memory
// in MiB; GPUFree is each GPU's free milli-GPU (0..1000).
type Node struct {
	ID      string
	Model   string // GPU model, "" without GPUs
	CPUCap  int64
	MemCap  int64
	CPUFree int64
	MemFree int64
	GPUFree []int64
	// Ready says the node may take new work (not draining, quarantined or
	// down): only a ready node is a target.
	Ready bool
	// CPUUsed is the CPU the node's tasks use (soft state); negative
	// when unknown, in which case the node is never judged hot.
	CPUUsed int64
}

// Task is a running task (one allocation).
type Task struct {
	ID   string
	Node int // index into Cell.Nodes
	CPU  int64
	Mem  int64
	// GPUs are the indices of the GPUs it holds on its node, GPUMilli what
	// it takes from each (1000 for whole GPUs, the share otherwise).
	GPUs     []int
	GPUMilli int64
	Spec     []string // acceptable GPU models; empty: any
	Group    string   // the group whose disruption budget a move spends
	// Movable is false when the task must stay: its group opted out, a
	// deployment of it is running, or its driver can neither migrate nor
	// replace it.
	Movable bool
	// LastMoved is when it was last moved (-1 never); Since when it
	// started (-1 unknown).
	LastMoved int64
	Since     int64
	// CPUUsed is the CPU it uses (soft state); negative when unknown.
	CPUUsed int64
	// Prefers, when set, says whether a node satisfies the task's soft
	// placement preferences; a task on a node that does not is "unmet"
	// and a move to one that does honours them.
	Prefers func(node int) bool
}

// Cell is what Plan is shown.
type Cell struct {
	Nodes []Node
	Tasks []Task
}

// Validate checks that the cell is consistent: every task's node exists,
// its GPUs exist, and no node's free resources are negative. Plan refuses
// an inconsistent cell.
func (c *Cell) Validate() error {
	for i := range c.Nodes {
		n := &c.Nodes[i]
		if n.CPUFree < 0 || n.MemFree < 0 || n.CPUFree > n.CPUCap || n.MemFree > n.MemCap {
			return fmt.Errorf("node %s: free resources outside 0..capacity", n.ID)
		}
		for g, f := range n.GPUFree {
			if f < 0 || f > 1000 {
				return fmt.Errorf("node %s: GPU %d has %d milli free", n.ID, g, f)
			}
		}
	}
	for i := range c.Tasks {
		t := &c.Tasks[i]
		if t.Node < 0 || t.Node >= len(c.Nodes) {
			return fmt.Errorf("task %s: node %d out of range", t.ID, t.Node)
		}
		if t.CPU < 0 || t.Mem < 0 || t.GPUMilli < 0 || t.GPUMilli > 1000 || (len(t.GPUs) > 0) != (t.GPUMilli > 0) {
			return fmt.Errorf("task %s: bad request", t.ID)
		}
		for _, g := range t.GPUs {
			if g < 0 || g >= len(c.Nodes[t.Node].GPUFree) {
				return fmt.Errorf("task %s: GPU %d not on node %s", t.ID, g, c.Nodes[t.Node].ID)
			}
		}
	}
	return nil
}

// clone is a deep copy Plan works on.
func (c *Cell) clone() *Cell {
	out := &Cell{Nodes: slices.Clone(c.Nodes), Tasks: slices.Clone(c.Tasks)}
	for i := range out.Nodes {
		out.Nodes[i].GPUFree = slices.Clone(out.Nodes[i].GPUFree)
	}
	for i := range out.Tasks {
		out.Tasks[i].GPUs = slices.Clone(out.Tasks[i].GPUs)
	}
	return out
}

// accepts reports whether the task may use GPUs of model.
func (t *Task) accepts(model string) bool {
	return t.GPUMilli == 0 || (model != "" && (len(t.Spec) == 0 || slices.Contains(t.Spec, model)))
}

// take and give move a task's resources off and onto a node.
func (n *Node) take(t *Task, gpus []int) {
	n.CPUFree -= t.CPU
	n.MemFree -= t.Mem
	for _, g := range gpus {
		n.GPUFree[g] -= t.GPUMilli
	}
	if n.CPUUsed >= 0 && t.CPUUsed >= 0 {
		n.CPUUsed += t.CPUUsed
	}
}

func (n *Node) give(t *Task, gpus []int) {
	n.CPUFree += t.CPU
	n.MemFree += t.Mem
	for _, g := range gpus {
		n.GPUFree[g] += t.GPUMilli
	}
	if n.CPUUsed >= 0 && t.CPUUsed >= 0 {
		n.CPUUsed -= t.CPUUsed
	}
}
