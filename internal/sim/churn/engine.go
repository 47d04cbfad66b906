package churn

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/strata-dev/strata/internal/sim/cluster"
	"github.com/strata-dev/strata/internal/sim/eventq"
	simfrag "github.com/strata-dev/strata/internal/sim/frag"
	"github.com/strata-dev/strata/internal/sim/policy"
	"github.com/strata-dev/strata/internal/sim/trace"
)

// Config is one churn run. Times are seconds, Warmup and Days days.
type Config struct {
	Nodes []trace.Node
	Pods  []trace.Pod
	// Policy names a policy of package policy; NewPlacer, when set,
	// builds the placer instead (Policy then only names the result).
	Policy    string
	NewPlacer func(seed int64) cluster.Placer
	TieBreak  string
	Seed      int64
	// Load is the offered GPU load as a multiple of the GPU capacity.
	Load float64
	// Patience is how long a pod that found no room waits for it before
	// it is turned away (DefaultPatience when 0).
	Patience int64
	// Warmup days are simulated before the measured Days begin.
	Warmup, Days float64
	// Rebalancer, when set, is asked for moves every Period seconds.
	Rebalancer Rebalancer
	Period     int64
	// Sample is how often the measured window is sampled (3600 when 0).
	Sample int64
	// Failures take nodes down at their times (in time order); a node
	// comes back empty Repair seconds later. The pods it ran are
	// interrupted and wait to be placed again for what was left of their
	// lifetimes.
	Failures []NodeFailure
	Repair   int64
	// Clock, when set, hears the time of every event before it happens
	// (a caller's model of the cell, such as the failure model behind a
	// placer's forecasts, advances with it).
	Clock func(now int64)
	// Progress, when set, hears the simulated hours done and in all.
	Progress func(done, total int)
}

// The churn mode's defaults.
const (
	DefaultLoad     = 1.2
	DefaultPatience = 3600
	DefaultWarmup   = 1
	DefaultDays     = 7
)

// Rebalancer plans moves of running pods. Plan must not change the
// cluster; the engine applies the moves it returns, in order, each make
// before break (placed on its target before it leaves its node), and
// refuses one the cluster no longer accepts. waiting are the pods that
// found no room and wait, oldest first.
type Rebalancer interface {
	Plan(now int64, c *cluster.Cluster, running []Running, waiting []*trace.Pod) []Move
}

// NodeFailure takes node Node (an index into Config.Nodes) down at At.
type NodeFailure struct {
	At   int64
	Node int
}

// Running is a pod running in the cell, as a rebalancer sees it.
type Running struct {
	Alloc     cluster.AllocID
	Since     int64 // when it started
	LastMoved int64 // when it was last moved; -1 never
}

// Move takes a running allocation to another placement.
type Move struct {
	Alloc cluster.AllocID
	To    cluster.Placement
}

// Result is one churn run over its measured window.
type Result struct {
	Policy string `json:"policy"`
	Seed   int64  `json:"seed"`
	// Load and ArrivalsPerDay describe the stream.
	Load           float64 `json:"load"`
	ArrivalsPerDay float64 `json:"arrivalsPerDay"`
	// GPUAlloc, CPUAlloc and MemAlloc are the mean shares (%) of capacity
	// allocated over the window, sampled every Sample seconds.
	GPUAlloc float64 `json:"gpuAlloc"`
	CPUAlloc float64 `json:"cpuAlloc"`
	MemAlloc float64 `json:"memAlloc"`
	// FragGPU is the mean of FGD's fragmentation measure (the idle GPU a
	// pod drawn from the trace could not use), as % of GPU capacity.
	FragGPU float64 `json:"fragGPU"`
	// Arrived counts the window's arrivals; Placed those placed (at once
	// or after waiting), TurnedAway those that waited Patience in vain;
	// TurnedAwayGPU is their share (%) of the arrivals' GPU request.
	Arrived       int     `json:"arrived"`
	Placed        int     `json:"placed"`
	TurnedAway    int     `json:"turnedAway"`
	TurnedAwayGPU float64 `json:"turnedAwayGPU"`
	// TurnedAwayBy counts them by what they asked: "cpu", "share", or
	// the number of whole GPUs.
	TurnedAwayBy map[string]int `json:"turnedAwayBy,omitempty"`
	// Waited counts the pods placed after waiting, WaitMean their mean
	// wait in seconds.
	Waited   int     `json:"waited"`
	WaitMean float64 `json:"waitMean"`
	// Running is the mean number of pods running.
	Running float64 `json:"running"`
	// Migrations are the window's moves; MigratedPerDay is the share (%)
	// of the running pods moved per day; Refused the moves the cluster
	// refused when applied.
	Migrations     int     `json:"migrations"`
	MigratedPerDay float64 `json:"migratedPerDay"`
	Refused        int     `json:"refused,omitempty"`
	// Failures are the node failures in the window; Interrupted the pods
	// they interrupted, InterruptedGPU those pods' milli-GPU.
	Failures       int     `json:"failures,omitempty"`
	Interrupted    int     `json:"interrupted,omitempty"`
	InterruptedGPU int64   `json:"interruptedGPU,omitempty"`
	Days           float64 `json:"days"`
}

// ErrBadConfig wraps every configuration error of Run.
var ErrBadConfig = errors.New("bad churn config")

func (cfg *Config) check() error {
	if len(cfg.Nodes) == 0 || cfg.Days <= 0 || cfg.Warmup < 0 || cfg.Patience < 0 {
		return fmt.Errorf("%w: need nodes, Days > 0, Warmup and Patience >= 0", ErrBadConfig)
	}
	if cfg.Rebalancer != nil && cfg.Period <= 0 {
		return fmt.Errorf("%w: a rebalancer needs a positive period", ErrBadConfig)
	}
	return nil
}

func (cfg *Config) load() float64 {
	if cfg.Load == 0 {
		return DefaultLoad
	}
	return cfg.Load
}

func (cfg *Config) patience() int64 {
	if cfg.Patience == 0 {
		return DefaultPatience
	}
	return cfg.Patience
}

func (cfg *Config) sample() int64 {
	if cfg.Sample <= 0 {
		return 3600
	}
	return cfg.Sample
}

// Run simulates cfg.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	c, err := cluster.New(cfg.Nodes)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadConfig, err)
	}
	stream, err := NewStream(cfg.Pods, c.Capacity().GPUMilli, cfg.load(), uint64(cfg.Seed))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadConfig, err)
	}
	var placer cluster.Placer
	if cfg.NewPlacer != nil {
		placer = cfg.NewPlacer(cfg.Seed)
	} else {
		sel, err := policy.New(cfg.Policy, policy.Options{Seed: uint64(cfg.Seed), Workload: cfg.Pods, TieBreak: cfg.TieBreak})
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadConfig, err)
		}
		placer = sel
	}
	dist := simfrag.FromPods(cfg.Pods, simfrag.DefaultCoverage)
	e := &engine{ctx: ctx, cfg: &cfg, c: c, placer: placer, stream: stream, frag: simfrag.NewTracker(&dist, c),
		queue: waitQueue{patience: cfg.patience()}, byAlloc: map[cluster.AllocID]int32{}, leave: eventq.New(leavesFirst),
		res: Result{Policy: cfg.Policy, Seed: cfg.Seed, Load: cfg.load(), ArrivalsPerDay: stream.Rate(), Days: cfg.Days}}
	if err := e.run(); err != nil {
		return nil, err
	}
	return &e.res, nil
}

// engine is the state of one run.
type engine struct {
	ctx    context.Context
	cfg    *Config
	c      *cluster.Cluster
	placer cluster.Placer
	stream *Stream
	frag   *simfrag.Tracker
	queue  waitQueue
	res    Result
	start  int64 // of the measured window

	pods    []instance // every pod placed, by instance id
	byAlloc map[cluster.AllocID]int32
	live    []int32 // instances running, in no order (sorted for the rebalancer)
	leave   *eventq.Queue[leaving]
	failed  int         // failures applied so far
	repairs []repairing // nodes down, in order of return

	samples                        int
	gpu, cpu, mem, fragSum, runSum float64
	arrivedGPU, awayGPU            int64
	waitSum                        float64
}

// instance is one placed pod: its allocation (which a move replaces).
type instance struct {
	alloc     cluster.AllocID
	pod       *trace.Pod
	since     int64
	leaves    int64
	lastMoved int64
	livePos   int32 // index in live while running
	gone      bool  // interrupted by a node failure: its leave event is void
}

// Event kinds, in the order they run at equal times.
const (
	evRepair = iota
	evFail
	evLeave
	evExpire
	evTick
	evSample
	evArrive
)

func (e *engine) run() error {
	const hour = 3600
	e.start = int64(e.cfg.Warmup * 86400)
	end := e.start + int64(e.cfg.Days*86400)
	for _, a := range e.stream.Initial() {
		if err := e.offer(a, 0); err != nil {
			return err
		}
	}
	next := e.stream.Next()
	nextSample, nextTick := e.start, int64(-1)
	if e.cfg.Rebalancer != nil {
		nextTick = e.cfg.Period
	}
	lastHour := int64(-1)
	for {
		if err := e.ctx.Err(); err != nil {
			return err
		}
		t, kind := next.At, evArrive
		if nextSample <= t {
			t, kind = nextSample, evSample
		}
		if nextTick >= 0 && nextTick <= t {
			t, kind = nextTick, evTick
		}
		if x, ok := e.queue.nextExpiry(); ok && x <= t {
			t, kind = x, evExpire
		}
		if l, ok := e.leave.Peek(); ok && l.at <= t {
			t, kind = l.at, evLeave
		}
		if len(e.cfg.Failures) > e.failed && e.cfg.Failures[e.failed].At <= t {
			t, kind = e.cfg.Failures[e.failed].At, evFail
		}
		if len(e.repairs) > 0 && e.repairs[0].At <= t {
			t, kind = e.repairs[0].At, evRepair
		}
		if t >= end {
			break
		}
		if e.cfg.Clock != nil {
			e.cfg.Clock(t)
		}
		if h := t / hour; h != lastHour && e.cfg.Progress != nil {
			lastHour = h
			e.cfg.Progress(int(h), int(end/hour))
		}
		var err error
		switch kind {
		case evRepair:
			err = e.repair(t)
		case evFail:
			err = e.fail(t)
		case evLeave:
			err = e.depart(t)
		case evExpire:
			for _, a := range e.queue.expire(t) {
				if a.At >= e.start {
					e.res.TurnedAway++
					e.awayGPU += a.Pod.GPURequestMilli()
					if e.res.TurnedAwayBy == nil {
						e.res.TurnedAwayBy = map[string]int{}
					}
					e.res.TurnedAwayBy[askOf(a.Pod)]++
				}
			}
		case evTick:
			err = e.rebalance(t)
			nextTick += e.cfg.Period
		case evSample:
			e.sample()
			nextSample += e.cfg.sample()
		case evArrive:
			if t >= e.start {
				e.res.Arrived++
				e.arrivedGPU += next.Pod.GPURequestMilli()
			}
			err = e.offer(next, t)
			next = e.stream.Next()
		}
		if err != nil {
			return err
		}
	}
	if e.cfg.Progress != nil {
		e.cfg.Progress(int(end/hour), int(end/hour))
	}
	e.finish()
	return nil
}

// offer tries to place an arriving pod; one that fits nowhere waits.
func (e *engine) offer(a Arrival, now int64) error {
	placed, err := e.tryPlace(a, now)
	if err == nil && !placed {
		e.queue.pods = append(e.queue.pods, a)
	}
	return err
}

// tryPlace asks the placer for a and starts it if it fits.
func (e *engine) tryPlace(a Arrival, now int64) (bool, error) {
	pl, ok := e.placer.Place(e.c, a.Pod)
	if !ok {
		return false, nil
	}
	id, err := e.c.Assign(a.Pod, pl)
	if err != nil {
		return false, fmt.Errorf("policy %s placed %s badly: %w", e.res.Policy, a.Pod.Name, err)
	}
	if a.At >= e.start {
		e.res.Placed++
		if now > a.At {
			e.res.Waited++
			e.waitSum += float64(now - a.At)
		}
	}
	inst := int32(len(e.pods))
	e.pods = append(e.pods, instance{alloc: id, pod: a.Pod, since: now, leaves: now + a.Life, lastMoved: -1, livePos: int32(len(e.live))})
	e.live = append(e.live, inst)
	e.byAlloc[id] = inst
	e.leave.Push(leaving{at: now + a.Life, inst: inst})
	return true, nil
}

// depart ends the pod whose time is up and offers its room to the queue.
func (e *engine) depart(now int64) error {
	l := e.leave.Pop()
	in := &e.pods[l.inst]
	if in.gone {
		return nil
	}
	node := e.c.Alloc(in.alloc).Node
	if err := e.c.Release(in.alloc); err != nil {
		return fmt.Errorf("release: %w", err)
	}
	e.unlive(l.inst)
	return e.retry(now, []int{node})
}

// unlive drops a running instance from the live set.
func (e *engine) unlive(i int32) {
	in := &e.pods[i]
	delete(e.byAlloc, in.alloc)
	last := e.live[len(e.live)-1]
	e.live[in.livePos] = last
	e.pods[last].livePos = in.livePos
	e.live = e.live[:len(e.live)-1]
}

// fail takes the next failing node down: its pods are interrupted and
// wait to be placed again for the rest of their lifetimes.
func (e *engine) fail(now int64) error {
	f := e.cfg.Failures[e.failed]
	e.failed++
	if f.Node < 0 || f.Node >= e.c.NumNodes() {
		return fmt.Errorf("%w: failure of node %d, the cell has %d", ErrBadConfig, f.Node, e.c.NumNodes())
	}
	n := e.c.Node(f.Node)
	if !n.Up {
		return nil
	}
	cpu, mem := n.CPUCap, n.MemCap
	evicted, err := e.c.SetDown(f.Node)
	if err != nil {
		return fmt.Errorf("fail node %s: %w", n.Name, err)
	}
	e.repairs = append(e.repairs, repairing{At: now + e.cfg.Repair, Node: f.Node, cpu: cpu, mem: mem})
	if now >= e.start {
		e.res.Failures++
	}
	for _, id := range evicted {
		inst, ok := e.byAlloc[id]
		if !ok {
			continue
		}
		in := &e.pods[inst]
		in.gone = true
		e.unlive(inst)
		if now >= e.start {
			e.res.Interrupted++
			e.res.InterruptedGPU += in.pod.GPURequestMilli()
		}
		e.queue.pods = append(e.queue.pods, Arrival{Pod: in.pod, At: now, Life: max(in.leaves-now, 1)})
	}
	return e.retry(now, allNodes(e.c))
}

// repair brings a failed node back, empty, and offers it to the queue.
func (e *engine) repair(now int64) error {
	r := e.repairs[0]
	e.repairs = e.repairs[1:]
	if err := e.c.SetUp(r.Node, r.cpu, r.mem); err != nil {
		return fmt.Errorf("repair: %w", err)
	}
	return e.retry(now, []int{r.Node})
}

type repairing struct {
	At       int64
	Node     int
	cpu, mem int64
}

func allNodes(c *cluster.Cluster) []int {
	out := make([]int, c.NumNodes())
	for i := range out {
		out[i] = i
	}
	return out
}

// retry offers the room on nodes to the waiting pods, oldest first: a pod
// that now fits one of them is handed to the placer (which may choose
// another node).
func (e *engine) retry(now int64, nodes []int) error {
	var err error
	e.queue.retry(func(a Arrival) bool {
		if err != nil || !slices.ContainsFunc(nodes, func(n int) bool { return e.c.Fits(n, a.Pod) }) {
			return false
		}
		placed, perr := e.tryPlace(a, now)
		err = perr
		return placed
	})
	return err
}

// rebalance asks the rebalancer for moves and applies them, each make
// before break: the new allocation is assigned while the old one still
// holds its resources, then the old one is released. The sources' room
// then goes to the waiting pods.
func (e *engine) rebalance(now int64) error {
	order := slices.Clone(e.live)
	slices.SortFunc(order, func(a, b int32) int { return cmp.Compare(a, b) })
	running := make([]Running, len(order))
	for k, i := range order {
		in := &e.pods[i]
		running[k] = Running{Alloc: in.alloc, Since: in.since, LastMoved: in.lastMoved}
	}
	waiting := make([]*trace.Pod, len(e.queue.pods))
	for k, a := range e.queue.pods {
		waiting[k] = a.Pod
	}
	var freed []int
	for _, m := range e.cfg.Rebalancer.Plan(now, e.c, running, waiting) {
		inst, ok := e.byAlloc[m.Alloc]
		if !ok {
			e.res.Refused++
			continue
		}
		a := e.c.Alloc(m.Alloc)
		from, pod := a.Node, a.Pod
		id, err := e.c.Assign(pod, m.To)
		if err != nil {
			e.res.Refused++ // the target no longer has the room: the pod stays
			continue
		}
		if err := e.c.Release(m.Alloc); err != nil {
			return fmt.Errorf("move: release the source: %w", err)
		}
		delete(e.byAlloc, m.Alloc)
		e.byAlloc[id] = inst
		in := &e.pods[inst]
		in.alloc, in.lastMoved = id, now
		if now >= e.start {
			e.res.Migrations++
		}
		if !slices.Contains(freed, from) {
			freed = append(freed, from)
		}
	}
	if len(freed) == 0 {
		return nil
	}
	return e.retry(now, freed)
}

func (e *engine) sample() {
	used, capa := e.c.Used(), e.c.Capacity()
	fragMilli, _ := e.frag.Update(e.c)
	e.samples++
	e.gpu += share(used.GPUMilli, capa.GPUMilli)
	e.cpu += share(used.CPUMilli, capa.CPUMilli)
	e.mem += share(used.MemoryMiB, capa.MemoryMiB)
	if capa.GPUMilli > 0 {
		e.fragSum += 100 * fragMilli / float64(capa.GPUMilli)
	}
	e.runSum += float64(len(e.live))
}

func (e *engine) finish() {
	r := &e.res
	if e.samples > 0 {
		n := float64(e.samples)
		r.GPUAlloc, r.CPUAlloc, r.MemAlloc = e.gpu/n, e.cpu/n, e.mem/n
		r.FragGPU, r.Running = e.fragSum/n, e.runSum/n
	}
	if e.arrivedGPU > 0 {
		r.TurnedAwayGPU = 100 * float64(e.awayGPU) / float64(e.arrivedGPU)
	}
	if r.Waited > 0 {
		r.WaitMean = e.waitSum / float64(r.Waited)
	}
	if r.Running > 0 {
		r.MigratedPerDay = 100 * float64(r.Migrations) / e.cfg.Days / r.Running
	}
}

func share(a, b int64) float64 {
	if b <= 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

type leaving struct {
	at   int64
	inst int32
}

func leavesFirst(a, b *leaving) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.inst < b.inst
}

// askOf names what a pod asks for: "cpu", "share" or its whole GPUs.
func askOf(p *trace.Pod) string {
	switch {
	case p.NumGPU == 0:
		return "cpu"
	case p.IsShare():
		return "share"
	}
	return fmt.Sprint(p.NumGPU)
}
