package churn

import (
	"math"
	"slices"
	"sort"

	"github.com/strata-dev/strata/internal/frag"
	"github.com/strata-dev/strata/internal/rebalance"
	"github.com/strata-dev/strata/internal/sim/cluster"
	simfrag "github.com/strata-dev/strata/internal/sim/frag"
	"github.com/strata-dev/strata/internal/sim/trace"
)

// Planner is the churn engine's Rebalancer: internal/rebalance's Plan on
// the simulated cell, with a budget of moves per day as a share of the
// running pods.
type Planner struct {
	// Target is what GPU fragmentation is measured against.
	Target frag.Distribution
	// PerDay is the share of the running pods it may move in any 24
	// hours.
	PerDay float64
	// Period is the seconds between plans.
	Period   int64
	Cooldown int64
	Weights  rebalance.Weights
	// ForWaiting measures fragmentation against the pods waiting for room
	// (weighted by the GPU they ask for) instead of Target, and plans
	// nothing while none waits: moves then make room for the demand the
	// cell is turning away.
	ForWaiting bool
	// Candidates and Evacuate are rebalance.Config's.
	Candidates int
	Evacuate   int

	// Survival is rebalance.Config.Survival (SurvivalOf builds it from
	// the trace's lifetimes).
	Survival func(age int64) float64
	// MaxPerPeriod caps one plan's moves (0: only the daily budget).
	MaxPerPeriod int

	recent []int64 // times of the moves of the last day
	// Last is the latest plan (for reports and tests).
	Last *rebalance.Result
}

var _ Rebalancer = (*Planner)(nil)

// Plan implements Rebalancer.
func (pl *Planner) Plan(now int64, c *cluster.Cluster, running []Running, waiting []*trace.Pod) []Move {
	// The budget is a rolling day: the moves of the last 24 hours and
	// this plan's together stay within PerDay of the pods running now,
	// and a plan holds at most MaxPerPeriod.
	for len(pl.recent) > 0 && pl.recent[0] <= now-86400 {
		pl.recent = pl.recent[1:]
	}
	budget := int(math.Floor(pl.PerDay*float64(len(running)))) - len(pl.recent)
	if pl.MaxPerPeriod > 0 {
		budget = min(budget, pl.MaxPerPeriod)
	}
	if budget <= 0 {
		return nil
	}
	target := pl.Target
	if pl.ForWaiting {
		if len(waiting) == 0 {
			return nil
		}
		target = DemandTarget(derefPods(waiting))
	}
	cell := CellOf(c, running)
	res, err := rebalance.Plan(cell, rebalance.Config{Now: now, MaxMoves: budget, Cooldown: pl.Cooldown, Target: &target,
		Weights: pl.Weights, MinGain: 1e-9, Candidates: pl.Candidates, Evacuate: pl.Evacuate, Survival: pl.Survival})
	if err != nil {
		return nil // an inconsistent view is a bug the cluster's own checks would show; move nothing
	}
	pl.Last = res
	for range res.Moves {
		pl.recent = append(pl.recent, now)
	}
	out := make([]Move, 0, len(res.Moves))
	for _, mv := range res.Moves {
		a := c.Alloc(running[mv.Task].Alloc)
		var gpus cluster.GPUSet
		for _, g := range mv.GPUs {
			gpus = gpus.With(g)
		}
		out = append(out, Move{Alloc: running[mv.Task].Alloc, To: cluster.Placement{Node: mv.To, GPUs: gpus, Milli: a.Milli}})
	}
	return out
}

// CellOf is the cluster as internal/rebalance sees it: every node (a node
// that is down is not Ready), and the running pods as tasks, in the order
// of running.
func CellOf(c *cluster.Cluster, running []Running) *rebalance.Cell {
	cell := &rebalance.Cell{Nodes: make([]rebalance.Node, c.NumNodes()), Tasks: make([]rebalance.Task, len(running))}
	for i := range cell.Nodes {
		n := c.Node(i)
		cell.Nodes[i] = rebalance.Node{ID: n.Name, Model: n.Model, CPUCap: n.CPUCap, MemCap: n.MemCap, CPUFree: n.CPUFree,
			MemFree: n.MemFree, GPUFree: n.GPUFree, Ready: n.Up, CPUUsed: -1}
	}
	for k, r := range running {
		a := c.Alloc(r.Alloc)
		t := rebalance.Task{ID: a.Pod.Name, Node: a.Node, CPU: a.CPUMilli, Mem: a.MemoryMiB, Spec: a.Pod.GPUSpec,
			Movable: true, LastMoved: r.LastMoved, Since: r.Since, CPUUsed: -1}
		if a.Pod.NumGPU > 0 {
			t.GPUMilli = a.Milli
			for g := range len(c.Node(a.Node).GPUFree) {
				if a.GPUs.Has(g) {
					t.GPUs = append(t.GPUs, g)
				}
			}
		}
		cell.Tasks[k] = t
	}
	return cell
}

// DemandTarget is the rebalancer's target workload: every GPU shape of the
// trace weighted by the GPU it asks for (count × milli-GPU), not by its
// count. Placement asks "which pod comes next", which the count answers
// (FGD's target); a move asks "which GPU demand is turned away for lack of
// a fitting hole", and there a pod of eight GPUs weighs eight times one of
// one. Shapes without GPUs are left out: under moves the idle GPU total is
// fixed, so what they make of it cannot change.
func DemandTarget(pods []trace.Pod) frag.Distribution {
	var shapes []frag.Shape
	for _, s := range simfrag.Shapes(pods) {
		if s.NumGPU > 0 {
			s.Count = float64(int64(s.NumGPU) * s.PerGPUMilli)
			shapes = append(shapes, s)
		}
	}
	return frag.FromShapes(shapes, 1)
}

func derefPods(ps []*trace.Pod) []trace.Pod {
	out := make([]trace.Pod, len(ps))
	for i, p := range ps {
		out[i] = *p
	}
	return out
}

// SurvivalOf is the empirical chance that a pod of the trace that has run
// for age seconds runs horizon seconds more: among the trace's lifetimes
// longer than age, the share longer than age + horizon (1 when none is
// that long). Lifetimes are heavy-tailed — most pods end within minutes,
// a few run for months — so an old pod is likely to stay and a young one
// to leave by itself.
func SurvivalOf(pods []trace.Pod, horizon int64) func(age int64) float64 {
	var lives []int64
	for i := range pods {
		if p := &pods[i]; p.Creation != trace.Absent && p.Deletion != trace.Absent {
			lives = append(lives, max(p.Deletion-p.Creation, 1))
		}
	}
	slices.Sort(lives)
	above := func(x int64) int { // lifetimes > x
		return len(lives) - sort.Search(len(lives), func(i int) bool { return lives[i] > x })
	}
	return func(age int64) float64 {
		n := above(age)
		if n == 0 {
			return 1
		}
		return float64(above(age+horizon)) / float64(n)
	}
}
