package cluster

import (
	"cmp"
	"slices"

	"github.com/strata-dev/strata/internal/sim/trace"
)

// Reasons Reject gives, in the order it checks them.
const (
	RejectDown      = "node down"
	RejectCPU       = "insufficient cpu"
	RejectMemory    = "insufficient memory"
	RejectNoGPU     = "no gpu"
	RejectModel     = "gpu model not accepted"
	RejectGPUs      = "insufficient gpu"
	RejectGPUShares = "no gpu with room for the share"
	RejectJob       = "runs a task of the job (different-machine constraint)"
)

// Reject says why pod p cannot be placed on node i now, "" when it can: the
// first failing check of Fits, worded for explanations. Fits stays the
// fast path; a test keeps the two in step.
func (c *Cluster) Reject(i int, p *trace.Pod) string {
	n := &c.nodes[i]
	switch {
	case !n.Up:
		return RejectDown
	case n.CPUFree < p.CPUMilli:
		return RejectCPU
	case n.MemFree < p.MemoryMiB:
		return RejectMemory
	case p.NumGPU == 0:
		return c.rejectJob(i, p)
	case len(n.GPUFree) == 0:
		return RejectNoGPU
	case !p.AcceptsModel(n.Model):
		return RejectModel
	case len(n.GPUFree) < p.NumGPU || n.gpuTotal < p.GPURequestMilli():
		return RejectGPUs
	}
	need, k := p.PerGPUMilli(), 0
	for _, f := range n.GPUFree {
		if f >= need {
			k++
		}
	}
	if k >= p.NumGPU {
		return c.rejectJob(i, p)
	}
	if p.IsShare() {
		return RejectGPUShares
	}
	return RejectGPUs
}

func (c *Cluster) rejectJob(i int, p *trace.Pod) string {
	if c.Conflicts(i, p) {
		return RejectJob
	}
	return ""
}

// Explanation says how one pod was placed: how many nodes each check
// rejected and, when the placer can tell, the chosen node's score by
// component and the next best nodes.
type Explanation struct {
	Pod        string           `json:"pod"`
	Attempts   int              `json:"attempts"` // placement attempts (replay retries a waiting pod)
	Placed     bool             `json:"placed"`
	Node       string           `json:"node,omitempty"`
	GPUs       []int            `json:"gpus,omitempty"`
	Nodes      int              `json:"nodes"`    // nodes in the cluster
	Feasible   int              `json:"feasible"` // nodes that could take the pod
	Rejected   []Rejection      `json:"rejected,omitempty"`
	Score      float64          `json:"score"`
	Tied       int              `json:"tied,omitempty"` // feasible nodes with the chosen node's score: the tie rule chose
	Components []ScoreComponent `json:"components,omitempty"`
	RunnersUp  []NodeScore      `json:"runnersUp,omitempty"`
}

// Rejection counts the nodes one check refused.
type Rejection struct {
	Reason string `json:"reason"`
	Nodes  int    `json:"nodes"`
}

// ScoreComponent is one named part of a node's score.
type ScoreComponent struct {
	Name  string  `json:"name"`
	Score float64 `json:"score"`
}

// NodeScore is a node and its total score.
type NodeScore struct {
	Node  string  `json:"node"`
	Score float64 `json:"score"`
}

// Explainer is implemented by placers that can say why they chose a node:
// given the pod and the decision Place just returned (before the cluster
// changes), it fills e's score, components and runners-up. The engine
// fills the rest.
type Explainer interface {
	Explain(c *Cluster, p *trace.Pod, pl Placement, placed bool, e *Explanation)
}

// Explain builds the placer-independent part of an explanation of pod p
// and placement pl: the node checks, counted by reason, and where it went.
func (c *Cluster) Explain(p *trace.Pod, pl Placement, placed bool) Explanation {
	e := Explanation{Pod: p.Name, Placed: placed, Nodes: len(c.nodes)}
	counts := map[string]int{}
	for i := range c.nodes {
		if r := c.Reject(i, p); r != "" {
			counts[r]++
		} else {
			e.Feasible++
		}
	}
	for r, n := range counts {
		e.Rejected = append(e.Rejected, Rejection{Reason: r, Nodes: n})
	}
	slices.SortFunc(e.Rejected, func(a, b Rejection) int {
		if a.Nodes != b.Nodes {
			return b.Nodes - a.Nodes
		}
		return cmp.Compare(a.Reason, b.Reason)
	})
	if placed {
		e.Node = c.nodes[pl.Node].Name
		for g := range c.nodes[pl.Node].GPUFree {
			if pl.GPUs.Has(g) {
				e.GPUs = append(e.GPUs, g)
			}
		}
	}
	return e
}
