package rebalance

import (
	"errors"
	"testing"
)

func gpuOnly() Weights { return Weights{GPUFrag: 1} }

func TestPlan(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cell  *Cell
		cfg   Config
		moves []Move // Task, From, To and GPUs are compared
		stop  string
	}{
		{
			name: "two half shares on two GPUs make room for a whole GPU",
			cell: cellOf([]Node{node("a", "T4", 2, 32000, 65536)}, share("s1", 0, 0, 500, 1000), share("s2", 0, 1, 400, 1000)),
			cfg:  Config{MaxMoves: 5, Target: target([3]int64{1, 1000, 1000}), Weights: gpuOnly()},
			// The smaller share joins the larger one's GPU.
			moves: []Move{{Task: 1, From: 0, To: 0, GPUs: []int{0}}},
			stop:  StopNoGain,
		},
		{
			name: "a share moves to another node's remnant",
			cell: cellOf([]Node{node("a", "T4", 1, 32000, 65536), node("b", "T4", 1, 32000, 65536)},
				share("big", 0, 0, 800, 1000), share("small", 1, 0, 150, 1000)),
			cfg:   Config{MaxMoves: 5, Target: target([3]int64{1, 1000, 1000}), Weights: gpuOnly()},
			moves: []Move{{Task: 1, From: 1, To: 0, GPUs: []int{0}}},
			stop:  StopNoGain,
		},
		{
			name: "nothing moves within a node that cannot hold both copies",
			cell: cellOf([]Node{node("a", "T4", 2, 2000, 65536)}, share("s1", 0, 0, 500, 1000), share("s2", 0, 1, 400, 1000)),
			cfg:  Config{MaxMoves: 5, Target: target([3]int64{1, 1000, 1000}), Weights: gpuOnly()},
			stop: StopNoGain,
		},
		{
			name: "a node is emptied for the shape that needs all of it",
			cell: cellOf([]Node{node("a", "V100", 4, 64000, 65536), node("b", "V100", 4, 64000, 65536)},
				whole("w1", 0, []int{0}, 1000), whole("w2", 0, []int{1}, 1000), whole("w3", 1, []int{0}, 1000)),
			cfg: Config{MaxMoves: 5, Target: target([3]int64{4, 1000, 4000}), Weights: gpuOnly(), Evacuate: 2},
			// Node b holds one task: moving it to node a frees b whole.
			moves: []Move{{Task: 2, From: 1, To: 0, GPUs: []int{2}}},
			stop:  StopNoGain,
		},
		{
			name: "without evacuations no single step of emptying a node gains",
			cell: cellOf([]Node{node("a", "V100", 4, 64000, 65536), node("b", "V100", 4, 64000, 65536)},
				whole("w1", 0, []int{0}, 1000), whole("w2", 1, []int{0}, 1000), whole("w3", 1, []int{1}, 1000)),
			cfg:   Config{MaxMoves: 5, Target: target([3]int64{4, 1000, 4000}), Weights: gpuOnly()},
			moves: []Move{{Task: 0, From: 0, To: 1, GPUs: []int{2}}},
			stop:  StopNoGain,
		},
		{
			name: "an evacuation of two tasks",
			cell: cellOf([]Node{node("a", "V100", 4, 64000, 65536), node("b", "V100", 4, 64000, 65536), node("c", "V100", 2, 64000, 65536)},
				whole("w1", 0, []int{0}, 1000), whole("w2", 0, []int{1}, 1000), whole("w3", 1, []int{0}, 1000), whole("w4", 1, []int{1}, 1000)),
			cfg:   Config{MaxMoves: 5, Target: target([3]int64{4, 1000, 4000}), Weights: gpuOnly(), Evacuate: 2},
			moves: []Move{{Task: 0, From: 0, To: 1, GPUs: []int{2}}, {Task: 1, From: 0, To: 1, GPUs: []int{3}}},
			stop:  StopNoGain,
		},
		{
			name: "the budget stops the plan",
			cell: cellOf([]Node{node("a", "T4", 2, 32000, 65536)}, share("s1", 0, 0, 500, 1000), share("s2", 0, 1, 400, 1000)),
			cfg:  Config{MaxMoves: 0, Target: target([3]int64{1, 1000, 1000}), Weights: gpuOnly()},
			stop: StopNoBudget,
		},
		{
			name: "a task moved within the cooldown stays",
			cell: cellOf([]Node{node("a", "T4", 2, 32000, 65536)}, share("s1", 0, 0, 500, 1000), Task{ID: "s2", Node: 0, CPU: 1000, Mem: 1024, GPUs: []int{1}, GPUMilli: 400, LastMoved: 50}),
			cfg:  Config{Now: 100, Cooldown: 3600, MaxMoves: 5, Target: target([3]int64{1, 1000, 1000}), Weights: gpuOnly()},
			// s1 may still go to s2's GPU.
			moves: []Move{{Task: 0, From: 0, To: 0, GPUs: []int{1}}},
			stop:  StopNoGain,
		},
		{
			name: "unmovable tasks and spent budgets leave nothing to move",
			cell: cellOf([]Node{node("a", "T4", 2, 32000, 65536)}, Task{ID: "pinned-1", Node: 0, CPU: 1000, Mem: 1024, GPUs: []int{0}, GPUMilli: 500},
				Task{ID: "s2", Node: 0, CPU: 1000, Mem: 1024, GPUs: []int{1}, GPUMilli: 400, Group: "g"}),
			cfg:  Config{MaxMoves: 5, Target: target([3]int64{1, 1000, 1000}), Weights: gpuOnly(), Allowed: func(string) int { return 0 }},
			stop: StopNoTask,
		},
		{
			name: "a preference that now fits is honoured",
			cell: func() *Cell {
				c := cellOf([]Node{node("a", "", 0, 8000, 8192), node("b", "", 0, 8000, 8192)}, Task{ID: "t", Node: 0, CPU: 1000, Mem: 1024})
				c.Tasks[0].Prefers = func(n int) bool { return n == 1 }
				return c
			}(),
			cfg:   Config{MaxMoves: 5, Weights: Weights{Unmet: 1}},
			moves: []Move{{Task: 0, From: 0, To: 1}},
			stop:  StopNoGain,
		},
		{
			name: "a preference for a node that is not ready waits",
			cell: func() *Cell {
				c := cellOf([]Node{node("a", "", 0, 8000, 8192), node("b", "", 0, 8000, 8192)}, Task{ID: "t", Node: 0, CPU: 1000, Mem: 1024})
				c.Tasks[0].Prefers = func(n int) bool { return n == 1 }
				c.Nodes[1].Ready = false
				return c
			}(),
			cfg:  Config{MaxMoves: 5, Weights: Weights{Unmet: 1}},
			stop: StopNoGain,
		},
		{
			name: "a hot node sheds a busy task",
			cell: func() *Cell {
				c := cellOf([]Node{node("a", "", 0, 8000, 65536), node("b", "", 0, 8000, 65536)},
					Task{ID: "busy", Node: 0, CPU: 2000, Mem: 1024, CPUUsed: 3000}, Task{ID: "calm", Node: 0, CPU: 2000, Mem: 1024, CPUUsed: 100})
				c.Nodes[0].CPUUsed, c.Nodes[1].CPUUsed = 7500, 500
				return c
			}(),
			cfg:   Config{MaxMoves: 5, HotShare: 0.7, Weights: Weights{Hot: 1}},
			moves: []Move{{Task: 0, From: 0, To: 1}},
			stop:  StopNoGain,
		},
		{
			name: "CPU stranded beside full memory is freed",
			cell: cellOf([]Node{node("a", "", 0, 8000, 4096), node("b", "", 0, 8000, 4096)},
				Task{ID: "memhog", Node: 0, CPU: 1000, Mem: 4096}, Task{ID: "cpuhog", Node: 1, CPU: 7000, Mem: 0}),
			// The cell's shape: 4 CPUs and 2 GiB. Node a has CPU and no
			// memory, node b memory and little CPU: neither fits one.
			cfg:   Config{MaxMoves: 5, Shapes: []Shape{{CPU: 4000, Mem: 2048, Weight: 1}}, Weights: Weights{Stranded: 1}},
			moves: []Move{{Task: 1, From: 1, To: 0}},
			stop:  StopNoGain,
		},
		{
			name: "a task never goes to a GPU model it does not accept",
			cell: cellOf([]Node{node("a", "T4", 1, 32000, 65536), node("b", "P100", 1, 32000, 65536)},
				Task{ID: "big", Node: 0, CPU: 1000, Mem: 1024, GPUs: []int{0}, GPUMilli: 800, Spec: []string{"T4"}},
				Task{ID: "small", Node: 1, CPU: 1000, Mem: 1024, GPUs: []int{0}, GPUMilli: 150, Spec: []string{"P100"}}),
			cfg:  Config{MaxMoves: 5, Target: target([3]int64{1, 1000, 1000}), Weights: gpuOnly()},
			stop: StopNoGain,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Plan(tc.cell, tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if res.Stopped != tc.stop {
				t.Errorf("stopped %q, want %q", res.Stopped, tc.stop)
			}
			if len(res.Moves) != len(tc.moves) {
				t.Fatalf("moves %+v, want %+v", res.Moves, tc.moves)
			}
			for i, m := range res.Moves {
				w := tc.moves[i]
				if m.Task != w.Task || m.From != w.From || m.To != w.To || !equalInts(m.GPUs, w.GPUs) {
					t.Errorf("move %d: %+v, want %+v", i, m, w)
				}
				if m.Gain <= 0 {
					t.Errorf("move %d gains %v", i, m.Gain)
				}
			}
			if len(res.Moves) > 0 && !(res.After.Total < res.Before.Total) {
				t.Errorf("measure %v -> %v: moves must lower it", res.Before.Total, res.After.Total)
			}
		})
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestPlanRefusesBadInput(t *testing.T) {
	good := cellOf([]Node{node("a", "T4", 1, 8000, 8192)}, share("s", 0, 0, 500, 1000))
	for _, tc := range []struct {
		name string
		cell *Cell
		cfg  Config
	}{
		{"negative budget", good, Config{MaxMoves: -1}},
		{"negative cooldown", good, Config{Cooldown: -1}},
		{"a task on no node", &Cell{Nodes: good.Nodes, Tasks: []Task{{ID: "x", Node: 3}}}, Config{}},
		{"a GPU the node lacks", &Cell{Nodes: good.Nodes, Tasks: []Task{{ID: "x", GPUs: []int{4}, GPUMilli: 500}}}, Config{}},
		{"overcommitted node", &Cell{Nodes: []Node{{ID: "n", CPUCap: 10, CPUFree: -1}}}, Config{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Plan(tc.cell, tc.cfg); !errors.Is(err, ErrBadConfig) {
				t.Errorf("err %v, want ErrBadConfig", err)
			}
		})
	}
}

func TestSurvivalSteersTheBudget(t *testing.T) {
	// Two equal moves; the old task is likely to stay, the young one to
	// leave by itself: the only move allowed goes to the old one.
	c := cellOf([]Node{node("a", "T4", 1, 32000, 65536), node("b", "T4", 1, 32000, 65536), node("c", "T4", 1, 32000, 65536)},
		Task{ID: "pinned-big", Node: 0, CPU: 1000, Mem: 1024, GPUs: []int{0}, GPUMilli: 700}, Task{ID: "young", Node: 1, CPU: 1000, Mem: 1024, GPUs: []int{0}, GPUMilli: 300, Since: 990},
		Task{ID: "old", Node: 2, CPU: 1000, Mem: 1024, GPUs: []int{0}, GPUMilli: 300, Since: 10})
	res, err := Plan(c, Config{Now: 1000, MaxMoves: 1, Target: target([3]int64{1, 1000, 1000}), Weights: gpuOnly(),
		Survival: func(age int64) float64 { return float64(age) / (float64(age) + 100) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Moves) != 1 || c.Tasks[res.Moves[0].Task].ID != "old" {
		t.Errorf("moves %+v: want the old task moved", res.Moves)
	}
}
