package rebalance

import (
	"github.com/strata-dev/strata/internal/frag"
)

// node builds a ready node with gpus GPUs of model (all free) and the
// given CPU and memory, all free.
func node(id, model string, gpus int, cpu, mem int64) Node {
	n := Node{ID: id, Model: model, CPUCap: cpu, MemCap: mem, CPUFree: cpu, MemFree: mem, Ready: true, CPUUsed: -1}
	for range gpus {
		n.GPUFree = append(n.GPUFree, 1000)
	}
	return n
}

// cellOf places tasks on nodes (each task's Node and GPUs say where),
// charging the nodes.
func cellOf(nodes []Node, tasks ...Task) *Cell {
	c := &Cell{Nodes: nodes}
	for _, t := range tasks {
		if t.LastMoved == 0 {
			t.LastMoved = -1
		}
		if t.Since == 0 {
			t.Since = -1
		}
		if t.CPUUsed == 0 {
			t.CPUUsed = -1
		}
		t.Movable = t.Movable || !t.pinned()
		c.Nodes[t.Node].take(&t, t.GPUs)
		c.Tasks = append(c.Tasks, t)
	}
	return c
}

// pinned marks a test task that must not be made movable by cellOf: its
// ID starts with "pinned".
func (t *Task) pinned() bool { return len(t.ID) >= 6 && t.ID[:6] == "pinned" }

// share is a task holding milli of GPU g on node n.
func share(id string, n, g int, milli, cpu int64) Task {
	return Task{ID: id, Node: n, CPU: cpu, Mem: 1024, GPUs: []int{g}, GPUMilli: milli}
}

// whole is a task holding the GPUs gs on node n.
func whole(id string, n int, gs []int, cpu int64) Task {
	return Task{ID: id, Node: n, CPU: cpu, Mem: 1024, GPUs: gs, GPUMilli: 1000}
}

// target is a workload of the given (GPUs, per-GPU milli, CPU) shapes,
// equally popular.
func target(shapes ...[3]int64) *frag.Distribution {
	var s []frag.Shape
	for _, x := range shapes {
		s = append(s, frag.Shape{NumGPU: int(x[0]), PerGPUMilli: x[1], CPUMilli: x[2], Count: 1})
	}
	d := frag.FromShapes(s, 1)
	return &d
}
