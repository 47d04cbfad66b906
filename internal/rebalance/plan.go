package rebalance

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/strata-dev/strata/internal/frag"
)

// ErrBadConfig: a configuration Plan cannot run with.
var ErrBadConfig = errors.New("bad rebalance config")

// Config is what Plan decides with.
type Config struct {
	// Now is the time cooldowns are judged at (seconds, the caller's clock).
	Now int64
	// MaxMoves is the most moves one plan may hold (the period's budget).
	MaxMoves int
	// Cooldown: a task moved less than this long ago stays.
	Cooldown int64
	// Allowed, when set, is how many tasks of a group may be moved now:
	// its disruption budget (internal/disruption.Allowed). Nil: no limit.
	Allowed func(group string) int
	// Target is the workload GPU fragmentation is measured against; nil
	// leaves GPUs out of the measure. Plan binds a copy to the cell's
	// models.
	Target *frag.Distribution
	// Shapes are the CPU and memory shapes the stranded measure uses; nil
	// takes them from the cell's tasks (ShapesOf).
	Shapes []Shape
	// HotShare is the share of a node's CPU above which its use counts as
	// hot; 0 leaves hot nodes out.
	HotShare float64
	Weights  Weights
	// MinGain is the least a move must lower the measure's Total by.
	MinGain float64
	// Candidates is how many tasks each step examines, those whose
	// removal lowers the measure most (DefaultCandidates when 0).
	Candidates int
	// Survival, when set, is the probability that a task that has run for
	// age seconds is still running a while later (the cell's history of
	// lifetimes says how long): moves are chosen by gain × survival, so the
	// budget goes to tasks whose room would not come free soon by itself.
	// Nil weighs every task alike.
	Survival func(age int64) float64
	// Evacuate is the most tasks a node may hold for the plan to weigh
	// moving all of them at once (emptying it: room for the largest
	// shapes, or a node to give back); 0 weighs single moves only. Moves
	// are chosen by gain per move, so an evacuation of k tasks competes
	// with k single moves.
	Evacuate int
}

// DefaultCandidates bounds the tasks one step examines.
const DefaultCandidates = 48

// Move takes task Task from node From to node To, onto GPUs (the indices
// it will hold on To; empty for a task without GPUs).
type Move struct {
	Task int   `json:"task"`
	From int   `json:"from"`
	To   int   `json:"to"`
	GPUs []int `json:"gpus,omitempty"`
	// Gain is how much the move lowers the measure's Total.
	Gain float64 `json:"gain"`
	// Evacuation, when not 0, numbers the evacuation the move belongs
	// to: its moves empty one node together, and only all of them
	// together are sure to lower the measure (a step may not on its own).
	// A caller makes them all or, when one fails, keeps in mind that the
	// cell may be left worse until it finishes or undoes them.
	Evacuation int `json:"evacuation,omitempty"`
	// Value is Gain weighed by the chance the task would still be running
	// after the survival horizon (Config.Survival): what moves are chosen
	// by. A move of a task that is about to end anyway buys little.
	Value float64 `json:"value"`
}

// Result is a plan: its moves, in the order they must be made, and the
// measure before and after them.
type Result struct {
	Moves  []Move  `json:"moves"`
	Before Measure `json:"before"`
	After  Measure `json:"after"`
	// Stopped says why the plan holds no more moves.
	Stopped string `json:"stopped"`
	// Eligible counts the tasks that could have moved (movable, out of
	// cooldown, within their group's budget).
	Eligible int `json:"eligible"`
}

// Why a plan stops.
const (
	StopBudget   = "move budget spent"
	StopNoGain   = "no move lowers the measure"
	StopNoTask   = "no task may move"
	StopNoBudget = "move budget is zero"
)

// Plan finds at most cfg.MaxMoves moves that each lower the cell's
// measure; see the package comment for the rules every move keeps. The
// cell is not modified.
func Plan(cell *Cell, cfg Config) (*Result, error) {
	if cfg.MaxMoves < 0 || cfg.Cooldown < 0 || cfg.HotShare < 0 || cfg.MinGain < 0 || cfg.Candidates < 0 {
		return nil, fmt.Errorf("%w: budget, cooldown, hot share, minimum gain and candidates must not be negative", ErrBadConfig)
	}
	if err := cell.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadConfig, err)
	}
	p := newPlanner(cell, &cfg)
	res := &Result{Before: p.m.measure(p.c, p.counts)}
	res.Eligible = p.eligibleCount()
	switch {
	case cfg.MaxMoves == 0:
		res.Stopped = StopNoBudget
	case res.Eligible == 0:
		res.Stopped = StopNoTask
	}
	evacuations := 0
	for res.Stopped == "" {
		left := cfg.MaxMoves - len(res.Moves)
		if left <= 0 {
			res.Stopped = StopBudget
			break
		}
		mv, ok := p.best()
		evac := p.bestEvacuation(left)
		if len(evac) > 0 && (!ok || sumValue(evac)/float64(len(evac)) > mv.Value) {
			// The trial was undone; the steps are made again here.
			evacuations++
			for i := range evac {
				evac[i].Evacuation = evacuations
				p.apply(evac[i])
			}
			res.Moves = append(res.Moves, evac...)
			continue
		}
		if !ok {
			res.Stopped = StopNoGain
			break
		}
		p.apply(mv)
		res.Moves = append(res.Moves, mv)
	}
	res.After = p.m.measure(p.c, p.counts)
	// The check before committing: a plan never leaves the cell worse by
	// its own measure. Every move lowered it, so this holds unless the
	// arithmetic drifted; then nothing is proposed.
	if res.After.Total > res.Before.Total {
		return &Result{Before: res.Before, After: res.Before, Stopped: StopNoGain, Eligible: res.Eligible}, nil
	}
	return res, nil
}

// planner is one plan's working state: a copy of the cell as the moves so
// far left it.
type planner struct {
	cfg    *Config
	c      *Cell
	m      measurer
	counts []int       // tasks per node
	parts  []nodeParts // per node, current
	moved  []bool      // per task, in this plan
	spent  map[string]int
	minGap float64
}

func newPlanner(cell *Cell, cfg *Config) *planner {
	c := cell.clone()
	p := &planner{cfg: cfg, c: c, counts: make([]int, len(c.Nodes)), moved: make([]bool, len(c.Tasks)), spent: map[string]int{}}
	for i := range c.Tasks {
		p.counts[c.Tasks[i].Node]++
	}
	p.m = measurer{shapes: cfg.Shapes, hotShare: cfg.HotShare, w: cfg.Weights, s: scaleOf(c)}
	if p.m.shapes == nil {
		p.m.shapes = ShapesOf(c.Tasks)
	}
	if cfg.Target != nil {
		d := *cfg.Target
		var models []string
		for i := range c.Nodes {
			if m := c.Nodes[i].Model; m != "" && !slices.Contains(models, m) {
				models = append(models, m)
			}
		}
		d.Bind(models)
		p.m.target = &d
	}
	p.parts = make([]nodeParts, len(c.Nodes))
	for i := range c.Nodes {
		p.parts[i] = p.m.parts(&c.Nodes[i], p.counts[i])
	}
	p.minGap = max(cfg.MinGain, 1e-12)
	return p
}

// eligible reports whether task i may move now.
func (p *planner) eligible(i int) bool {
	t := &p.c.Tasks[i]
	if !t.Movable || p.moved[i] {
		return false
	}
	if t.LastMoved >= 0 && p.cfg.Now-t.LastMoved < p.cfg.Cooldown {
		return false
	}
	if p.cfg.Allowed != nil && p.spent[t.Group] >= p.cfg.Allowed(t.Group) {
		return false
	}
	return true
}

func (p *planner) eligibleCount() int {
	n := 0
	for i := range p.c.Tasks {
		if p.eligible(i) {
			n++
		}
	}
	return n
}

// candidate is a task and what its node's share would be without it.
type candidate struct {
	task    int
	without nodeParts
	removal float64
}

// best is the single move that lowers the measure most, or ok=false when
// none lowers it by MinGain.
func (p *planner) best() (Move, bool) {
	w := &p.cfg.Weights
	var cands []candidate
	for i := range p.c.Tasks {
		if !p.eligible(i) {
			continue
		}
		t := &p.c.Tasks[i]
		n := &p.c.Nodes[t.Node]
		n.give(t, t.GPUs)
		without := p.m.parts(n, p.counts[t.Node]-1)
		n.take(t, t.GPUs)
		removal := p.parts[t.Node].total(w) - without.total(w) + w.Unmet*p.m.unmet(t, t.Node)
		cands = append(cands, candidate{task: i, without: without, removal: removal})
	}
	slices.SortFunc(cands, func(a, b candidate) int {
		if c := cmp.Compare(b.removal, a.removal); c != 0 {
			return c
		}
		return cmp.Compare(a.task, b.task)
	})
	k := p.cfg.Candidates
	if k == 0 {
		k = DefaultCandidates
	}
	if len(cands) > k {
		cands = cands[:k]
	}
	var best Move
	found := false
	var gpus []int
	for _, cd := range cands {
		t := &p.c.Tasks[cd.task]
		src := t.Node
		for d := range p.c.Nodes {
			n := &p.c.Nodes[d]
			if !n.Ready || !t.accepts(n.Model) {
				continue
			}
			if d == src {
				// Within the node: only a share may change GPU, and the
				// node must hold both copies at once.
				if len(t.GPUs) != 1 || t.GPUMilli >= 1000 || n.CPUFree < t.CPU || n.MemFree < t.Mem {
					continue
				}
			} else if n.CPUFree < t.CPU || n.MemFree < t.Mem {
				continue
			}
			for _, opt := range p.gpuOptions(t, d, gpus[:0]) {
				gain := p.gainOf(t, cd, d, opt)
				if gain < p.minGap {
					continue
				}
				if v := gain * p.survival(t); !found || v > best.Value {
					best, found = Move{Task: cd.task, From: src, To: d, GPUs: slices.Clone(opt), Gain: gain, Value: v}, true
				}
			}
		}
	}
	return best, found
}

// gpuOptions are the GPU sets task t could take on node d: the lowest
// free GPUs for whole GPUs, one GPU per distinct free level for a share
// (GPUs with equal free milli are alike), nil for a task without GPUs.
func (p *planner) gpuOptions(t *Task, d int, buf []int) [][]int {
	n := &p.c.Nodes[d]
	if t.GPUMilli == 0 {
		return [][]int{nil}
	}
	if t.GPUMilli >= 1000 {
		for g, f := range n.GPUFree {
			if f == 1000 && len(buf) < len(t.GPUs) {
				buf = append(buf, g)
			}
		}
		if len(buf) < len(t.GPUs) {
			return nil
		}
		return [][]int{buf}
	}
	var out [][]int
	var levels []int64
	for g, f := range n.GPUFree {
		if d == t.Node && g == t.GPUs[0] {
			continue
		}
		// On its own node the share's current GPU counts as holding it
		// still (make before break), so other GPUs need the room.
		if f < t.GPUMilli || slices.Contains(levels, f) {
			continue
		}
		levels = append(levels, f)
		out = append(out, []int{g})
	}
	return out
}

// gainOf is how much moving task t (candidate cd) to node d onto gpus
// lowers the measure's Total.
func (p *planner) gainOf(t *Task, cd candidate, d int, gpus []int) float64 {
	w := &p.cfg.Weights
	src := t.Node
	n := &p.c.Nodes[d]
	unmet := w.Unmet * (p.m.unmet(t, src) - p.m.unmet(t, d))
	if d == src {
		n.give(t, t.GPUs)
		n.take(t, gpus)
		after := p.m.parts(n, p.counts[d])
		n.give(t, gpus)
		n.take(t, t.GPUs)
		return p.parts[d].total(w) - after.total(w) + unmet
	}
	n.take(t, gpus)
	with := p.m.parts(n, p.counts[d]+1)
	n.give(t, gpus)
	return p.parts[src].total(w) + p.parts[d].total(w) - cd.without.total(w) - with.total(w) + unmet
}

// apply makes move mv on the working copy.
func (p *planner) apply(mv Move) {
	t := &p.c.Tasks[mv.Task]
	p.c.Nodes[mv.From].give(t, t.GPUs)
	p.c.Nodes[mv.To].take(t, mv.GPUs)
	p.counts[mv.From]--
	p.counts[mv.To]++
	t.Node, t.GPUs, t.LastMoved = mv.To, slices.Clone(mv.GPUs), p.cfg.Now
	p.moved[mv.Task] = true
	p.spent[t.Group]++
	p.parts[mv.From] = p.m.parts(&p.c.Nodes[mv.From], p.counts[mv.From])
	p.parts[mv.To] = p.m.parts(&p.c.Nodes[mv.To], p.counts[mv.To])
}

func sumValue(ms []Move) float64 {
	v := 0.0
	for _, m := range ms {
		v += m.Value
	}
	return v
}

// survival is the weight of moving task t now (1 without Survival or a
// start time).
func (p *planner) survival(t *Task) float64 {
	if p.cfg.Survival == nil || t.Since < 0 || t.Since > p.cfg.Now {
		return 1
	}
	return p.cfg.Survival(p.cfg.Now - t.Since)
}

func sumGain(ms []Move) float64 {
	g := 0.0
	for _, m := range ms {
		g += m.Gain
	}
	return g
}

// bestEvacuation weighs emptying each node that holds at least one and at
// most cfg.Evacuate tasks, all of them eligible: each task in turn goes to
// its best target (another node) on the cell as the ones before left it.
// It returns the evacuation with the most gain per move whose every step
// fits, whose total lowers the measure by MinGain per move and that fits
// in left moves; nil when none does.
func (p *planner) bestEvacuation(left int) []Move {
	if p.cfg.Evacuate <= 0 {
		return nil
	}
	var best []Move
	bestRate := 0.0
	on := make([][]int, len(p.c.Nodes))
	for i := range p.c.Tasks {
		if n := p.c.Tasks[i].Node; p.counts[n] <= p.cfg.Evacuate {
			on[n] = append(on[n], i)
		}
	}
	for src := range p.c.Nodes {
		k := p.counts[src]
		if k == 0 || k > p.cfg.Evacuate || k > left {
			continue
		}
		tasks := on[src]
		if slices.ContainsFunc(tasks, func(i int) bool { return !p.eligible(i) }) || !p.withinBudgets(tasks) {
			continue
		}
		moves, ok := p.trialEvacuation(src, tasks)
		if !ok {
			continue
		}
		if sumGain(moves) < p.minGap*float64(len(moves)) {
			continue
		}
		rate := sumValue(moves) / float64(len(moves))
		if best == nil || rate > bestRate {
			best, bestRate = moves, rate
		}
	}
	return best
}

// withinBudgets reports whether moving all of tasks keeps every group
// within its disruption budget (eligible judges one task at a time).
func (p *planner) withinBudgets(tasks []int) bool {
	if p.cfg.Allowed == nil {
		return true
	}
	n := map[string]int{}
	for _, i := range tasks {
		g := p.c.Tasks[i].Group
		if n[g]++; p.spent[g]+n[g] > p.cfg.Allowed(g) {
			return false
		}
	}
	return true
}

// trialEvacuation moves tasks off src one by one to their best other node
// on the working copy, then undoes it all; ok=false when one finds no
// node. The gains are exact for the sequence: each is measured on the cell
// the steps before it left.
func (p *planner) trialEvacuation(src int, tasks []int) ([]Move, bool) {
	var moves []Move
	type undo struct {
		task int
		node int
		gpus []int
		last int64
	}
	var undos []undo
	defer func() {
		for i := len(undos) - 1; i >= 0; i-- {
			u := undos[i]
			t := &p.c.Tasks[u.task]
			p.c.Nodes[t.Node].give(t, t.GPUs)
			p.c.Nodes[u.node].take(t, u.gpus)
			p.counts[t.Node]--
			p.counts[u.node]++
			p.parts[t.Node] = p.m.parts(&p.c.Nodes[t.Node], p.counts[t.Node])
			p.parts[u.node] = p.m.parts(&p.c.Nodes[u.node], p.counts[u.node])
			t.Node, t.GPUs, t.LastMoved = u.node, u.gpus, u.last
			p.moved[u.task] = false
			p.spent[t.Group]--
		}
	}()
	for _, i := range tasks {
		mv, ok := p.bestFor(i, src)
		if !ok {
			return nil, false
		}
		t := &p.c.Tasks[i]
		undos = append(undos, undo{task: i, node: t.Node, gpus: slices.Clone(t.GPUs), last: t.LastMoved})
		p.apply(mv)
		moves = append(moves, mv)
	}
	return moves, true
}

// bestFor is task i's best move to a node other than except, whatever its
// gain (an evacuation step may cost before the last one pays).
func (p *planner) bestFor(i, except int) (Move, bool) {
	t := &p.c.Tasks[i]
	n := &p.c.Nodes[t.Node]
	n.give(t, t.GPUs)
	cd := candidate{task: i, without: p.m.parts(n, p.counts[t.Node]-1)}
	n.take(t, t.GPUs)
	var best Move
	found := false
	var buf []int
	for d := range p.c.Nodes {
		dn := &p.c.Nodes[d]
		if d == except || d == t.Node || !dn.Ready || !t.accepts(dn.Model) || dn.CPUFree < t.CPU || dn.MemFree < t.Mem {
			continue
		}
		for _, opt := range p.gpuOptions(t, d, buf[:0]) {
			gain := p.gainOf(t, cd, d, opt)
			if !found || gain > best.Gain {
				best, found = Move{Task: i, From: t.Node, To: d, GPUs: slices.Clone(opt), Gain: gain, Value: gain * p.survival(t)}, true
			}
		}
	}
	return best, found
}
