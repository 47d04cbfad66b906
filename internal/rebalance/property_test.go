package rebalance

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-dev/strata/internal/frag"
)

// genCell draws a small cell whose tasks were placed where they fitted,
// and a plan configuration over it.
func genCell(t *rapid.T) (*Cell, Config) {
	models := []string{"A", "B", ""}
	nn := rapid.IntRange(1, 6).Draw(t, "nodes")
	var nodes []Node
	for i := range nn {
		m := rapid.SampledFrom(models).Draw(t, "model")
		g := 0
		if m != "" {
			g = rapid.IntRange(1, 4).Draw(t, "gpus")
		}
		n := node(fmt.Sprint("n", i), m, g, rapid.Int64Range(2, 16).Draw(t, "cpu")*1000, rapid.Int64Range(1, 16).Draw(t, "mem")*1024)
		n.Ready = rapid.IntRange(0, 5).Draw(t, "ready") > 0
		if rapid.Bool().Draw(t, "usage") {
			n.CPUUsed = 0
		}
		nodes = append(nodes, n)
	}
	c := &Cell{Nodes: nodes}
	nt := rapid.IntRange(0, 12).Draw(t, "tasks")
	for k := range nt {
		tk := Task{ID: fmt.Sprint("t", k), CPU: rapid.Int64Range(0, 4).Draw(t, "tcpu") * 1000, Mem: rapid.Int64Range(0, 4).Draw(t, "tmem") * 1024,
			Group: rapid.SampledFrom([]string{"g1", "g2", "g3"}).Draw(t, "group"), Movable: rapid.IntRange(0, 4).Draw(t, "movable") > 0,
			LastMoved: rapid.Int64Range(-1, 1000).Draw(t, "last"), Since: rapid.Int64Range(-1, 1000).Draw(t, "since"), CPUUsed: -1}
		switch rapid.IntRange(0, 2).Draw(t, "kind") {
		case 1:
			tk.GPUMilli = rapid.Int64Range(1, 9).Draw(t, "share") * 100
		case 2:
			tk.GPUMilli = 1000
		}
		if rapid.Bool().Draw(t, "spec") {
			tk.Spec = []string{rapid.SampledFrom([]string{"A", "B"}).Draw(t, "specModel")}
		}
		if rapid.Bool().Draw(t, "prefers") {
			want := rapid.IntRange(0, nn-1).Draw(t, "preferred")
			tk.Prefers = func(n int) bool { return n == want }
		}
		if c.Nodes[0].CPUUsed >= 0 && rapid.Bool().Draw(t, "used") {
			tk.CPUUsed = rapid.Int64Range(0, 3000).Draw(t, "tused")
		}
		want := 1
		if tk.GPUMilli == 1000 {
			want = rapid.IntRange(1, 2).Draw(t, "wholeGPUs")
		}
		// Place it on the first node (from a drawn start) where it fits.
		start := rapid.IntRange(0, nn-1).Draw(t, "start")
		for j := range nn {
			n := &c.Nodes[(start+j)%nn]
			if n.CPUFree < tk.CPU || n.MemFree < tk.Mem || !tk.accepts(n.Model) {
				continue
			}
			var gpus []int
			for g, f := range n.GPUFree {
				if tk.GPUMilli > 0 && f >= tk.GPUMilli && len(gpus) < want {
					gpus = append(gpus, g)
				}
			}
			if tk.GPUMilli > 0 && len(gpus) < want {
				continue
			}
			tk.Node, tk.GPUs = (start+j)%nn, gpus
			if tk.GPUMilli == 0 {
				tk.GPUs = nil
			}
			n.take(&tk, tk.GPUs)
			if n.CPUUsed >= 0 && tk.CPUUsed < 0 {
				tk.CPUUsed = 0
			}
			c.Tasks = append(c.Tasks, tk)
			break
		}
	}
	allowed := map[string]int{"g1": rapid.IntRange(0, 3).Draw(t, "allowed1"), "g2": rapid.IntRange(0, 3).Draw(t, "allowed2"), "g3": 100}
	cfg := Config{Now: 1000, MaxMoves: rapid.IntRange(0, 6).Draw(t, "budget"), Cooldown: rapid.Int64Range(0, 600).Draw(t, "cooldown"),
		Allowed: func(g string) int { return allowed[g] }, HotShare: 0.5, Evacuate: rapid.IntRange(0, 3).Draw(t, "evacuate"),
		Weights: Weights{GPUFrag: rapid.Float64Range(0, 2).Draw(t, "wg"), Stranded: rapid.Float64Range(0, 2).Draw(t, "ws"),
			Hot: rapid.Float64Range(0, 2).Draw(t, "wh"), Occupied: rapid.Float64Range(0, 2).Draw(t, "wo"), Unmet: rapid.Float64Range(0, 2).Draw(t, "wu")},
		MinGain: 1e-9}
	if rapid.Bool().Draw(t, "survival") {
		cfg.Survival = func(age int64) float64 { return float64(age) / float64(age+100) }
	}
	var shapes []frag.Shape
	for _, tk := range c.Tasks {
		s := frag.Shape{CPUMilli: tk.CPU, Spec: tk.Spec, Count: 1}
		if tk.GPUMilli > 0 {
			s.NumGPU, s.PerGPUMilli = len(tk.GPUs), tk.GPUMilli
		}
		shapes = append(shapes, s)
	}
	if len(shapes) > 0 {
		d := frag.FromShapes(shapes, 1)
		cfg.Target = &d
	}
	return c, cfg
}

// replay applies a plan's moves to a copy of the cell with its own
// accounting, make before break: each target must hold the task while its
// source still does. It fails the test on any violation and returns the
// cell after the moves.
func replay(t *rapid.T, c *Cell, cfg Config, res *Result) *Cell {
	w := c.clone()
	seen := map[int]bool{}
	perGroup := map[string]int{}
	for i, m := range res.Moves {
		if m.Task < 0 || m.Task >= len(w.Tasks) {
			t.Fatalf("move %d names task %d", i, m.Task)
		}
		tk := &w.Tasks[m.Task]
		orig := &c.Tasks[m.Task]
		if seen[m.Task] {
			t.Fatalf("task %s moved twice in one plan", tk.ID)
		}
		seen[m.Task] = true
		if !orig.Movable {
			t.Fatalf("unmovable task %s moved", tk.ID)
		}
		if orig.LastMoved >= 0 && cfg.Now-orig.LastMoved < cfg.Cooldown {
			t.Fatalf("task %s moved %ds after its last move, cooldown %ds", tk.ID, cfg.Now-orig.LastMoved, cfg.Cooldown)
		}
		if perGroup[tk.Group]++; cfg.Allowed != nil && perGroup[tk.Group] > cfg.Allowed(tk.Group) {
			t.Fatalf("group %s moved %d tasks, allowed %d", tk.Group, perGroup[tk.Group], cfg.Allowed(tk.Group))
		}
		if m.From != tk.Node {
			t.Fatalf("move %d from node %d, task is on %d", i, m.From, tk.Node)
		}
		to := &w.Nodes[m.To]
		if !to.Ready || !tk.accepts(to.Model) {
			t.Fatalf("move %d to node %s: ready %v, model %q for spec %v", i, to.ID, to.Ready, to.Model, tk.Spec)
		}
		if len(m.GPUs) != len(tk.GPUs) {
			t.Fatalf("move %d gives %d GPUs to a task holding %d", i, len(m.GPUs), len(tk.GPUs))
		}
		// Make before break: the copy first, on the node as it is.
		if to.CPUFree < tk.CPU || to.MemFree < tk.Mem {
			t.Fatalf("move %d: node %s has %d CPU, %d MiB free for %d, %d", i, to.ID, to.CPUFree, to.MemFree, tk.CPU, tk.Mem)
		}
		for _, g := range m.GPUs {
			if g < 0 || g >= len(to.GPUFree) || to.GPUFree[g] < tk.GPUMilli {
				t.Fatalf("move %d: GPU %d of %s cannot take %d milli", i, g, to.ID, tk.GPUMilli)
			}
			if m.To == m.From && slices.Contains(tk.GPUs, g) {
				t.Fatalf("move %d: a share moves onto the GPU it holds", i)
			}
		}
		to.take(tk, m.GPUs)
		w.Nodes[m.From].give(tk, tk.GPUs)
		tk.Node, tk.GPUs = m.To, slices.Clone(m.GPUs)
	}
	if len(res.Moves) > cfg.MaxMoves {
		t.Fatalf("%d moves, budget %d", len(res.Moves), cfg.MaxMoves)
	}
	if err := w.Validate(); err != nil {
		t.Fatalf("after the moves: %v", err)
	}
	return w
}

func TestPropertyPlansKeepTheirPromises(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c, cfg := genCell(t)
		before := c.clone()
		res, err := Plan(c, cfg)
		if err != nil {
			t.Fatalf("plan: %v", err)
		}
		if !cellsEqual(c, before) {
			t.Fatal("Plan changed the cell it was shown")
		}
		after := replay(t, c, cfg, res)
		// Never worse by its own measure, judged by an independent
		// recomputation on the replayed cell.
		m := measureOf(after, cfg, c)
		if math.Abs(m.Total-res.After.Total) > 1e-9 {
			t.Fatalf("plan says the measure ends at %v, the replayed cell measures %v", res.After.Total, m.Total)
		}
		if res.After.Total > res.Before.Total+1e-12 {
			t.Fatalf("measure rose from %v to %v", res.Before.Total, res.After.Total)
		}
		// Every single move gains; every evacuation gains in all.
		units := map[int][]Move{}
		for i, mv := range res.Moves {
			if mv.Evacuation == 0 && mv.Gain < cfg.MinGain {
				t.Fatalf("move %d gains %v < %v", i, mv.Gain, cfg.MinGain)
			}
			units[mv.Evacuation] = append(units[mv.Evacuation], mv)
		}
		for k, ms := range units {
			if k > 0 && sumGain(ms) < cfg.MinGain*float64(len(ms)) {
				t.Fatalf("evacuation %d gains %v in %d moves", k, sumGain(ms), len(ms))
			}
		}
		// And the measure after each complete unit is below the one
		// before it.
		prev := res.Before.Total
		for i := 0; i < len(res.Moves); {
			j := i + 1
			for res.Moves[i].Evacuation != 0 && j < len(res.Moves) && res.Moves[j].Evacuation == res.Moves[i].Evacuation {
				j++
			}
			partial := &Result{Moves: res.Moves[:j]}
			now := measureOf(replay(t, c, cfg, partial), cfg, c).Total
			if now > prev+1e-12 {
				t.Fatalf("after move %d the measure rose from %v to %v", j-1, prev, now)
			}
			prev, i = now, j
		}
		// A second plan at the same time moves none of the tasks just
		// moved when the cooldown is set (their LastMoved is now).
		if cfg.Cooldown > 0 {
			moved := after.clone()
			for _, mv := range res.Moves {
				moved.Tasks[mv.Task].LastMoved = cfg.Now
			}
			res2, err := Plan(moved, cfg)
			if err != nil {
				t.Fatal(err)
			}
			for _, mv := range res2.Moves {
				if slices.ContainsFunc(res.Moves, func(m Move) bool { return m.Task == mv.Task }) {
					t.Fatalf("task %d moved again within the cooldown", mv.Task)
				}
			}
		}
	})
}

// measureOf measures a cell like Plan does, with the shapes of the cell
// the plan started from.
func measureOf(c *Cell, cfg Config, orig *Cell) Measure {
	p := newPlanner(c, &cfg)
	p.m.shapes = ShapesOf(orig.Tasks)
	if cfg.Shapes != nil {
		p.m.shapes = cfg.Shapes
	}
	counts := make([]int, len(c.Nodes))
	for i := range c.Tasks {
		counts[c.Tasks[i].Node]++
	}
	return p.m.measure(c, counts)
}

func cellsEqual(a, b *Cell) bool {
	if len(a.Nodes) != len(b.Nodes) || len(a.Tasks) != len(b.Tasks) {
		return false
	}
	for i := range a.Nodes {
		x, y := a.Nodes[i], b.Nodes[i]
		if x.CPUFree != y.CPUFree || x.MemFree != y.MemFree || !slices.Equal(x.GPUFree, y.GPUFree) || x.CPUUsed != y.CPUUsed {
			return false
		}
	}
	for i := range a.Tasks {
		if a.Tasks[i].Node != b.Tasks[i].Node || !slices.Equal(a.Tasks[i].GPUs, b.Tasks[i].GPUs) || a.Tasks[i].LastMoved != b.Tasks[i].LastMoved {
			return false
		}
	}
	return true
}
