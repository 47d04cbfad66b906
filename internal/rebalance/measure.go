package rebalance

import (
	"github.com/strata-dev/strata/internal/frag"
)

// Weights weigh the measure's components in its total. Each component is
// a share of the cell (0..1), so a weight says how much one percent of it
// is worth against one percent of another.
type Weights struct {
	GPUFrag  float64 `json:"gpuFrag"`
	Stranded float64 `json:"stranded"`
	Hot      float64 `json:"hot"`
	Occupied float64 `json:"occupied"`
	Unmet    float64 `json:"unmet"`
}

// DefaultWeights count GPU fragmentation, stranded CPU and memory, hot
// CPU and unmet preferences alike, and emptying nodes not at all (a cell
// asks for it with Occupied: docs/rebalancing.md).
var DefaultWeights = Weights{GPUFrag: 1, Stranded: 1, Hot: 1, Unmet: 1}

// Measure is how well a cell is placed, lower is better: each component
// a share of the cell, and their weighted Total.
type Measure struct {
	// GPUFrag is FGD's fragmentation summed over the nodes (the idle GPU
	// a task drawn from Target could not use), as a share of all GPUs.
	GPUFrag float64 `json:"gpuFrag"`
	// Stranded is the free CPU and memory that tasks of the cell's shapes
	// could not use because the node lacks the other dimension, as a
	// share of all CPU and memory (the mean of the two).
	Stranded float64 `json:"stranded"`
	// Hot is the CPU used beyond HotShare of their capacity on nodes that
	// report usage, as a share of all CPU.
	Hot float64 `json:"hot"`
	// Occupied is the share of nodes that run a task.
	Occupied float64 `json:"occupied"`
	// Unmet is the share of tasks whose preferences their node does not
	// satisfy.
	Unmet float64 `json:"unmet"`
	Total float64 `json:"total"`
}

// Shape is a CPU and memory shape of the cell's tasks and its popularity,
// for the stranded measure (ShapesOf builds them).
type Shape struct {
	CPU, Mem int64
	Weight   float64
}

// ShapesOf is the popularity of the tasks' CPU and memory shapes.
func ShapesOf(tasks []Task) []Shape {
	idx := map[[2]int64]int{}
	var out []Shape
	for i := range tasks {
		k := [2]int64{tasks[i].CPU, tasks[i].Mem}
		j, ok := idx[k]
		if !ok {
			j = len(out)
			idx[k] = j
			out = append(out, Shape{CPU: k[0], Mem: k[1]})
		}
		out[j].Weight++
	}
	for i := range out {
		out[i].Weight /= float64(len(tasks))
	}
	return out
}

// scale holds the cell's totals that turn amounts into shares.
type scale struct {
	gpu, cpu, mem float64
	nodes, tasks  float64
}

func scaleOf(c *Cell) scale {
	var s scale
	for i := range c.Nodes {
		n := &c.Nodes[i]
		s.gpu += float64(len(n.GPUFree)) * 1000
		s.cpu += float64(n.CPUCap)
		s.mem += float64(n.MemCap)
	}
	s.nodes, s.tasks = float64(len(c.Nodes)), float64(len(c.Tasks))
	return s
}

// nodeParts is one node's share of the node-local components.
type nodeParts struct {
	gpuFrag, stranded, hot, occupied float64
}

func (p nodeParts) total(w *Weights) float64 {
	return w.GPUFrag*p.gpuFrag + w.Stranded*p.stranded + w.Hot*p.hot + w.Occupied*p.occupied
}

// measurer computes the components under a configuration.
type measurer struct {
	target   *frag.Distribution
	shapes   []Shape
	hotShare float64
	w        Weights
	s        scale
}

// parts is node n's share, with tasks tasks on it.
func (m *measurer) parts(n *Node, tasks int) nodeParts {
	var p nodeParts
	if m.target != nil && len(n.GPUFree) > 0 && m.s.gpu > 0 {
		p.gpuFrag = m.target.NodeFrag(&frag.Node{ModelID: m.target.ModelID(n.Model), Model: n.Model, CPUFree: n.CPUFree, GPUFree: n.GPUFree}) / m.s.gpu
	}
	if len(m.shapes) > 0 && m.s.cpu > 0 && m.s.mem > 0 {
		free := (float64(n.CPUFree)/m.s.cpu + float64(n.MemFree)/m.s.mem) / 2
		for _, sh := range m.shapes {
			if sh.CPU > n.CPUFree || sh.Mem > n.MemFree {
				p.stranded += sh.Weight * free
			}
		}
	}
	if n.CPUUsed >= 0 && m.hotShare > 0 && m.s.cpu > 0 {
		p.hot = max(0, float64(n.CPUUsed)-m.hotShare*float64(n.CPUCap)) / m.s.cpu
	}
	if tasks > 0 && m.s.nodes > 0 {
		p.occupied = 1 / m.s.nodes
	}
	return p
}

// unmet is task t's share of Unmet on node n.
func (m *measurer) unmet(t *Task, n int) float64 {
	if t.Prefers == nil || t.Prefers(n) || m.s.tasks == 0 {
		return 0
	}
	return 1 / m.s.tasks
}

// measure is the whole cell's Measure.
func (m *measurer) measure(c *Cell, counts []int) Measure {
	var out Measure
	for i := range c.Nodes {
		p := m.parts(&c.Nodes[i], counts[i])
		out.GPUFrag += p.gpuFrag
		out.Stranded += p.stranded
		out.Hot += p.hot
		out.Occupied += p.occupied
	}
	for i := range c.Tasks {
		out.Unmet += m.unmet(&c.Tasks[i], c.Tasks[i].Node)
	}
	out.Total = m.w.GPUFrag*out.GPUFrag + m.w.Stranded*out.Stranded + m.w.Hot*out.Hot + m.w.Occupied*out.Occupied + m.w.Unmet*out.Unmet
	return out
}
