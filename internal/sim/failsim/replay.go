package failsim

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/strata-dev/strata/internal/predict"
	"github.com/strata-dev/strata/internal/sim/eventq"
	"github.com/strata-dev/strata/internal/sim/trace"
)

// The policies of a ticket replay.
const (
	// Reactive places each replica on a uniformly random node with a free
	// slot that holds no other replica of its group (racks are not looked
	// at) and replaces a replica when its node fails.
	Reactive = "reactive"
	// Predictive spreads a group's replicas over racks (a hard rule) and
	// rooms (a preference), keeps the nodes the correlated-failure model
	// ranks riskiest (up to Budget of the fleet) drained — their replicas
	// live-migrated away, no new ones placed — and replaces a replica when
	// its node fails anyway.
	Predictive = "predictive"
)

// ReplayConfig is the fleet's workload and the policies' knobs. Times are
// seconds.
type ReplayConfig struct {
	SlotsPerNode int     // replicas a node can run
	Utilization  float64 // share of all slots the groups fill
	Replicas     int     // replicas per group
	Repair       int64   // how long a failed node stays down (it returns empty)
	// Lifetime is the mean time a replica runs before it is replaced by a
	// new one of its group (a redeploy, a reschedule): exponential, so
	// the cell keeps placing work and a repaired node fills up again.
	Lifetime int64
	Window   int64   // a group "loses two" when two replicas fail within it
	Budget   float64 // predictive: share of nodes it may keep drained
	Tick     int64   // predictive: how often the model's risks are re-read
	Seed     uint64
	Model    predict.CorrelatedConfig
	// Progress, when set, hears the tickets replayed so far.
	Progress func(done, total int)
}

// DefaultReplay is `strata sim correlated`'s workload (docs/prediction.md).
var DefaultReplay = ReplayConfig{SlotsPerNode: 4, Utilization: 0.6, Replicas: 3, Repair: 86400, Lifetime: 14 * 86400, Window: 7 * 86400,
	Budget: 0.1, Tick: 600, Seed: 1, Model: predict.DefaultCorrelated}

// ReplayResult is one policy's replay.
type ReplayResult struct {
	Policy string `json:"policy"`
	Nodes  int    `json:"nodes"`
	Racks  int    `json:"racks"`
	Groups int    `json:"groups"`
	Tasks  int    `json:"tasks"`
	// Failures are the tickets replayed; NodesDown those that found their
	// node up (the others struck a node already down for repair).
	Failures  int `json:"failures"`
	NodesDown int `json:"nodesDown"`
	// Interrupted counts replicas running on a node when it failed.
	Interrupted int `json:"interrupted"`
	// Migrations are live migrations off drained nodes (predictive).
	Migrations int `json:"migrations"`
	// GroupsLosingTwo counts groups that had two replicas fail within
	// Window (at least once); DoubleLosses breaks those events down by
	// where the two failed nodes sat.
	GroupsLosingTwo int          `json:"groupsLosingTwo"`
	DoubleLosses    DoubleLosses `json:"doubleLosses"`
	// DrainedShare is the mean share of the fleet kept drained.
	DrainedShare float64 `json:"drainedShare"`
	// Unplaced counts replacements and migrations that found no node.
	Unplaced int `json:"unplaced"`
	// StruckDrained counts failures that struck a drained node (its
	// replicas had been moved away in time).
	StruckDrained int `json:"struckDrained"`
}

// DoubleLosses counts two failures of one group's replicas within the
// window, by how close the two nodes were.
type DoubleLosses struct {
	SameNode int `json:"sameNode"`
	SameRack int `json:"sameRack"`
	SameRoom int `json:"sameRoom"`
	Apart    int `json:"apart"`
}

// Replay replays tickets on fleet under policy.
func Replay(ctx context.Context, fleet *Fleet, tickets []trace.Ticket, cfg ReplayConfig, policy string) (*ReplayResult, error) {
	if policy != Reactive && policy != Predictive {
		return nil, fmt.Errorf("policy: unknown %q (want %s or %s)", policy, Reactive, Predictive)
	}
	if cfg.SlotsPerNode < 1 || cfg.Replicas < 1 || !(cfg.Utilization > 0 && cfg.Utilization <= 1) || cfg.Tick <= 0 || cfg.Window <= 0 || cfg.Lifetime <= 0 || cfg.Budget < 0 || cfg.Budget >= 1 {
		return nil, fmt.Errorf("replay: slots, replicas, tick, window and lifetime must be positive, utilization in (0, 1], budget in [0, 1)")
	}
	if len(tickets) == 0 {
		return nil, fmt.Errorf("replay: no tickets")
	}
	r := newReplayer(fleet, cfg, policy)
	if policy == Predictive {
		m, err := predict.NewCorrelated(cfg.Model, fleet.Places)
		if err != nil {
			return nil, err
		}
		r.model = m
	}
	r.start = tickets[0].Time
	if err := r.placeAll(); err != nil {
		return nil, err
	}
	r.nextTick = r.start
	for i, tk := range tickets {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if cfg.Progress != nil {
				cfg.Progress(i, len(tickets))
			}
		}
		n, ok := fleet.index[tk.Node]
		if !ok {
			return nil, fmt.Errorf("ticket %d: node %s is not in the fleet", i, tk.Node)
		}
		r.advance(tk.Time)
		r.fail(n, tk.Time)
		if r.model != nil {
			if err := r.model.Observe(tk.Node, tk.Time); err != nil {
				return nil, fmt.Errorf("ticket %d: %w", i, err)
			}
		}
	}
	if cfg.Progress != nil {
		cfg.Progress(len(tickets), len(tickets))
	}
	res := r.res
	res.Policy, res.Nodes, res.Racks, res.Groups, res.Tasks, res.Failures = policy, fleet.Len(), fleet.Racks(), len(r.groups), len(r.tasks), len(tickets)
	if r.ticks > 0 {
		res.DrainedShare = r.drainedSum / float64(r.ticks) / float64(fleet.Len())
	}
	return &res, nil
}

// replayer is the state of one replay.
type replayer struct {
	f      *Fleet
	cfg    ReplayConfig
	policy string
	rng    *rand.Rand
	model  *predict.Correlated
	start  int64

	up       []bool
	drained  []bool
	load     [][]int32 // per node: tasks on it
	tasks    []int32   // per task: its node (-1: none)
	groups   [][]int32 // per group: its tasks
	taskGrp  []int32
	repairs  []repair // nodes down, in order of return
	ends     *eventq.Queue[end]
	lastHit  []groupHit
	nextTick int64

	res        ReplayResult
	drainedSum float64
	ticks      int

	// predictive: the nodes of each rack, which nodes ever failed, the
	// latest risks and when they were read.
	rackNodes    [][]int
	failed       []bool
	risk         []float64
	dirty        bool
	lastRead     int64
	drainedCount int
}

type repair struct {
	node int
	at   int64
}

// groupHit is a group's latest replica failure.
type groupHit struct {
	at   int64
	node int
	set  bool
	lost bool // the group lost two already (counted once)
}

func newReplayer(f *Fleet, cfg ReplayConfig, policy string) *replayer {
	n := f.Len()
	r := &replayer{f: f, cfg: cfg, policy: policy, rng: rand.New(rand.NewPCG(cfg.Seed, 0x9e3779b97f4a7c15)),
		up: make([]bool, n), drained: make([]bool, n), load: make([][]int32, n), ends: eventq.New(endsFirst)}
	for i := range r.up {
		r.up[i] = true
	}
	r.failed = make([]bool, n)
	r.rackNodes = make([][]int, f.Racks())
	for i, rack := range f.rack {
		r.rackNodes[rack] = append(r.rackNodes[rack], i)
	}
	groups := int(cfg.Utilization * float64(n*cfg.SlotsPerNode) / float64(cfg.Replicas))
	r.groups = make([][]int32, groups)
	r.lastHit = make([]groupHit, groups)
	for g := range groups {
		for range cfg.Replicas {
			t := int32(len(r.tasks))
			r.tasks = append(r.tasks, -1)
			r.taskGrp = append(r.taskGrp, int32(g))
			r.groups[g] = append(r.groups[g], t)
		}
	}
	return r
}

func (r *replayer) placeAll() error {
	for t := range r.tasks {
		if !r.place(int32(t), -1) {
			return fmt.Errorf("replay: the fleet has no room for %d replicas of %d", len(r.tasks), r.cfg.Replicas)
		}
		r.schedule(int32(t), r.start)
	}
	return nil
}

// fail is a ticket: the node's replicas are interrupted and replaced, and
// the node is down for Repair.
func (r *replayer) fail(n int, at int64) {
	r.failed[n], r.dirty = true, true
	if r.drained[n] {
		r.res.StruckDrained++
	}
	if !r.up[n] {
		return
	}
	r.res.NodesDown++
	victims := slices.Clone(r.load[n])
	for _, t := range victims {
		r.res.Interrupted++
		r.hit(r.taskGrp[t], n, at)
		r.unassign(t)
	}
	r.up[n] = false
	r.repairs = append(r.repairs, repair{node: n, at: at + r.cfg.Repair})
	for _, t := range victims {
		if !r.place(t, -1) {
			r.res.Unplaced++
		}
	}
}

// hit records a replica of group g failing on node n.
func (r *replayer) hit(g int32, n int, at int64) {
	h := &r.lastHit[g]
	if h.set && at-h.at <= r.cfg.Window {
		switch {
		case h.node == n:
			r.res.DoubleLosses.SameNode++
		case r.f.rack[h.node] == r.f.rack[n]:
			r.res.DoubleLosses.SameRack++
		case r.f.room[h.node] == r.f.room[n]:
			r.res.DoubleLosses.SameRoom++
		default:
			r.res.DoubleLosses.Apart++
		}
		if !h.lost {
			h.lost = true
			r.res.GroupsLosingTwo++
		}
	}
	h.at, h.node, h.set = at, n, true
}

// advance processes, in time order, what happens up to t: repaired
// nodes return (empty), replicas end and are replaced, and (predictive)
// the model is read at every tick. At equal times: repairs, then ends,
// then the tick.
func (r *replayer) advance(t int64) {
	for {
		next, kind := t+1, -1
		if len(r.repairs) > 0 && r.repairs[0].at < next {
			next, kind = r.repairs[0].at, 0
		}
		if e, ok := r.ends.Peek(); ok && e.at < next {
			next, kind = e.at, 1
		}
		if r.model != nil && r.nextTick < next {
			next, kind = r.nextTick, 2
		}
		if kind < 0 || next > t {
			return
		}
		switch kind {
		case 0:
			r.up[r.repairs[0].node] = true
			r.repairs = r.repairs[1:]
		case 1:
			e := r.ends.Pop()
			if r.tasks[e.task] >= 0 {
				r.unassign(e.task)
			}
			if !r.place(e.task, -1) {
				r.res.Unplaced++
			}
			r.schedule(e.task, e.at)
		case 2:
			r.tick(r.nextTick)
			r.nextTick += r.cfg.Tick
		}
	}
}

// end is when a replica is replaced by a new one.
type end struct {
	at   int64
	task int32
}

func endsFirst(a, b *end) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.task < b.task
}

// schedule draws when task's current replica ends.
func (r *replayer) schedule(task int32, now int64) {
	life := int64(r.rng.ExpFloat64()*float64(r.cfg.Lifetime)) + 1
	r.ends.Push(end{at: now + life, task: task})
}

func (r *replayer) unassign(t int32) {
	n := r.tasks[t]
	r.load[n] = slices.DeleteFunc(r.load[n], func(x int32) bool { return x == t })
	r.tasks[t] = -1
}

func (r *replayer) assign(t int32, n int) {
	r.tasks[t] = int32(n)
	r.load[n] = append(r.load[n], t)
}

// place puts task t on a node the policy picks (never the node except),
// and reports whether one was found.
func (r *replayer) place(t int32, except int) bool {
	n := r.pick(t, except)
	if n < 0 {
		return false
	}
	r.assign(t, n)
	return true
}

// pick draws random nodes and keeps the first that suits the task,
// relaxing the policy's preferences if none of a bounded number of draws
// does, and scanning every node as a last resort.
func (r *replayer) pick(t int32, except int) int {
	const draws = 64
	strict := []int{2, 1, 0} // predictive: rooms apart, racks apart, then only the basics
	if r.policy == Reactive {
		strict = []int{0}
	}
	for _, level := range strict {
		for range draws {
			if n := r.rng.IntN(r.f.Len()); n != except && r.suits(t, n, level) {
				return n
			}
		}
	}
	for _, level := range strict {
		for n := range r.f.Len() {
			if n != except && r.suits(t, n, level) {
				return n
			}
		}
	}
	return -1
}

// suits reports whether node n may take task t: up, not drained, a free
// slot, no other replica of its group on it; with level 1 none in its
// rack, with level 2 none in its room either.
func (r *replayer) suits(t int32, n int, level int) bool {
	if !r.up[n] || r.drained[n] || len(r.load[n]) >= r.cfg.SlotsPerNode {
		return false
	}
	for _, o := range r.groups[r.taskGrp[t]] {
		m := r.tasks[o]
		if o == t || m < 0 {
			continue
		}
		if int(m) == n || (level >= 1 && r.f.rack[m] == r.f.rack[n]) || (level >= 2 && r.f.room[m] == r.f.room[n]) {
			return false
		}
	}
	return true
}

// tick re-reads the model's risks when a failure came since the last
// reading or refresh has passed, drains the riskiest nodes within the
// budget and live-migrates their replicas.
func (r *replayer) tick(now int64) {
	r.model.Advance(now)
	r.ticks++
	if !r.dirty && now-r.lastRead < refresh {
		r.drainedSum += float64(r.drainedCount)
		return
	}
	r.dirty, r.lastRead = false, now
	r.risk = r.model.Risks(now, r.risk[:0])
	base := r.model.BaseRate()
	// Nodes that never failed share their rack's risk: one candidate per
	// rack stands for them (block), the others are judged one by one.
	type cand struct {
		node  int // the node, or the first never-failed node of a rack
		block int // rack index for a block, -1 for one node
		risk  float64
	}
	var cands []cand
	for rack, nodes := range r.rackNodes {
		first := -1
		for _, n := range nodes {
			if r.failed[n] {
				if r.risk[n] > base {
					cands = append(cands, cand{n, -1, r.risk[n]})
				}
			} else if first < 0 {
				first = n
			}
		}
		if first >= 0 && r.risk[first] > base {
			cands = append(cands, cand{first, rack, r.risk[first]})
		}
	}
	slices.SortFunc(cands, func(a, b cand) int {
		if c := cmp.Compare(b.risk, a.risk); c != 0 {
			return c
		}
		return cmp.Compare(a.node, b.node)
	})
	limit := int(r.cfg.Budget * float64(r.f.Len()))
	want := make([]bool, r.f.Len())
	taken := 0
	for _, c := range cands {
		if taken >= limit {
			break
		}
		if c.block < 0 {
			want[c.node], taken = true, taken+1
			continue
		}
		for _, n := range r.rackNodes[c.block] {
			if taken < limit && !r.failed[n] {
				want[n], taken = true, taken+1
			}
		}
	}
	var moving []int32
	for n := range want {
		if want[n] && !r.drained[n] {
			moving = append(moving, r.load[n]...)
		}
		r.drained[n] = want[n]
	}
	r.drainedCount = taken
	r.drainedSum += float64(taken)
	for _, t := range moving {
		from := int(r.tasks[t])
		n := r.pick(t, from)
		if n < 0 {
			r.res.Unplaced++
			continue
		}
		// Make before break: the copy is placed, then the source stops.
		r.unassign(t)
		r.assign(t, n)
		r.res.Migrations++
	}
}

// refresh is how long the drained set may go unread without a failure:
// risks fall as failures age.
const refresh = 6 * 3600
