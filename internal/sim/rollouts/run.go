package rollouts

import (
	"container/heap"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/incident"
	"github.com/strata-dev/strata/internal/rollout"
	"github.com/strata-dev/strata/internal/rolloutguard"
	"github.com/strata-dev/strata/internal/stats"
)

// tick is the simulation's step: the rollout, the incident engine and the
// guard look every tick.
const tick = 5 * time.Second

// maxRun bounds a run whose rollout never finishes (a crash-looping
// version the guard missed stalls it).
const maxRun = 4 * time.Hour

// epoch is the virtual clock's zero.
var epoch = time.Date(2025, 1, 6, 9, 0, 0, 0, time.UTC)

// Outcome is what happened in one scenario.
type Outcome struct {
	Seed     uint64  `json:"seed"`
	Family   Family  `json:"family"`
	Bad      bool    `json:"bad"`
	Scenario string  `json:"scenario"`
	Noise    []Noise `json:"noise,omitempty"`

	// Halted: the guard halted the rollout, HaltedAfter its start, while
	// Replaced of Replicas copies ran the new version; DuringRollout: before
	// the rollout finished (else in the bake after it).
	Halted        bool          `json:"halted"`
	HaltedAfter   time.Duration `json:"haltedAfterNs,omitempty"`
	DuringRollout bool          `json:"duringRollout,omitempty"`
	Replaced      int           `json:"replaced"`
	Replicas      int           `json:"replicas"`
	Test          string        `json:"test,omitempty"`
	Class         string        `json:"class,omitempty"`
	Reason        string        `json:"reason,omitempty"`

	// Finished: the rollout replaced every copy, FinishedAfter its start.
	Finished      bool          `json:"finished"`
	FinishedAfter time.Duration `json:"finishedAfterNs,omitempty"`
	// HealthGateAfter is when the deployment's progress deadline would
	// have failed it (0: never), the gate Strata has without the guard.
	HealthGateAfter time.Duration `json:"healthGateAfterNs,omitempty"`
	// Faults counts the trouble the bad version itself caused (beyond the
	// base rates), on FaultNodes nodes: a bad version whose fault never
	// showed cannot be told from a good one.
	Faults     int `json:"faults"`
	FaultNodes int `json:"faultNodes"`
	// Explained counts web's trouble the incident engine explained away;
	// Incidents the incidents it opened.
	Explained int `json:"explained"`
	Incidents int `json:"incidents"`
}

// world is one run's state.
type world struct {
	s      Scenario
	rng    *rand.Rand
	now    time.Duration
	seq    int
	queue  events
	nodes  []*node
	copies map[string]*copyOf
	order  []*copyOf
	nextID int
	slots  []*slot
	refs   int

	engine     *incident.Engine
	guard      *rolloutguard.Guard
	noiseOn    map[int]bool // noise events in force
	faultNodes map[string]bool
	lastPlaced time.Time
	progress   time.Duration
	out        Outcome
}

// Config is how scenarios run.
type Config struct {
	// Policy is the guard's.
	Policy rolloutguard.Policy
	// NoExplain runs the guard without the incident engine's
	// explanations: what unrelated trouble would cost without them.
	NoExplain bool
}

// Run simulates one scenario.
func Run(s Scenario, cfg Config) Outcome {
	w := &world{
		s: s, rng: rand.New(rand.NewPCG(s.Seed, 0xd1ce)), copies: map[string]*copyOf{}, noiseOn: map[int]bool{}, faultNodes: map[string]bool{},
		engine: incident.New(incident.Policy{}),
		out:    Outcome{Seed: s.Seed, Family: s.Family, Bad: s.Bad(), Scenario: s.Describe(), Replicas: s.Replicas},
	}
	for _, n := range s.Noise {
		w.out.Noise = append(w.out.Noise, n.Kind)
	}
	w.build()
	w.guard = rolloutguard.New(rolloutguard.Deployment{ID: "web-d2", Version: 2, FromVersion: 1, Baseline: w.baseline(), Classes: w.classCount()}, cfg.Policy)
	explain := w.explain
	if cfg.NoExplain {
		explain = nil
	}
	w.census()
	// The old version runs everywhere; the guard knows its copies.
	for _, c := range w.order {
		w.start(c)
	}
	for i, n := range s.Noise {
		w.schedule(&event{at: n.At, kind: evNoise, noise: i})
		if n.For > 0 {
			w.schedule(&event{at: n.At + n.For, kind: evNoise, noise: i, end: true})
		}
	}
	for w.now = 0; w.now <= maxRun; w.now += tick {
		for len(w.queue) > 0 && w.queue[0].at <= w.now {
			w.handle(heap.Pop(&w.queue).(*event))
		}
		if !w.out.Finished {
			w.roll()
		}
		w.replaceLost()
		if w.now%time.Minute == 0 {
			w.census()
		}
		for _, c := range w.engine.Step(w.time(w.now)) {
			if c.Kind == incident.Opened {
				w.out.Incidents++
			}
		}
		v := w.guard.Judge(w.time(w.now), explain)
		if v.Halt {
			w.halt(v)
			break
		}
		if w.out.Finished && w.now >= w.out.FinishedAfter+s.Bake {
			break
		}
	}
	w.out.Explained = w.guard.Status().Explained
	return w.out
}

func (w *world) time(d time.Duration) time.Time { return epoch.Add(d) }

// build lays out the cell: nodes by rack, background copies on every
// node, and web's old copies spread over the nodes.
func (w *world) build() {
	s := w.s
	for r := range s.Racks {
		for k := range s.NodesPerRack {
			n := &node{index: len(w.nodes), rack: r, name: fmt.Sprintf("r%d-n%d", r+1, k+1), up: true}
			class := s.RackClass[r]
			avx := "true"
			if class == "gen4" {
				avx = "false"
			}
			n.attrs = []incident.Attr{{Key: incident.KeyNode, Value: n.name}, {Key: incident.KeyRack, Value: fmt.Sprintf("r%d", r+1)}}
			n.classes = []rolloutguard.Class{{Key: "class", Value: class}, {Key: "cpu.feature.avx512f", Value: avx}}
			w.nodes = append(w.nodes, n)
		}
	}
	for _, n := range w.nodes {
		for b := range s.Background {
			w.newCopy(fmt.Sprintf("bg%d", (n.index*s.Background+b)%12+1), background, -1, n)
		}
	}
	perm := w.rng.Perm(len(w.nodes))
	for i := range s.Replicas {
		c := w.newCopy("web", oldVersion, i, w.nodes[perm[i%len(perm)]])
		w.slots = append(w.slots, &slot{old: c})
	}
}

func (w *world) classCount() int {
	seen := map[rolloutguard.Class]bool{}
	for _, n := range w.nodes {
		for _, c := range n.classes {
			seen[c] = true
		}
	}
	return len(seen)
}

// baseline is the old version's record before the deployment: its starts
// (1-3 per copy) with their failures, and six hours of its copies' trouble.
func (w *world) baseline() rolloutguard.Baseline {
	starts := w.s.Replicas * (1 + w.rng.IntN(3))
	failed := 0
	for range starts {
		if w.rng.Float64() < w.s.StartFail {
			failed++
		}
	}
	exposure := time.Duration(w.s.Replicas) * 6 * time.Hour
	return rolloutguard.Baseline{Starts: starts, FailedStarts: failed, Events: stats.PoissonDraw(w.rng, w.s.Hazard*exposure.Hours()), Exposure: exposure}
}

// census gives the engine the cell's population: the live copies and the
// nodes that are up.
func (w *world) census() {
	c := incident.NewCensus()
	for _, n := range w.nodes {
		if n.up {
			c.Add(incident.UnitNode, n.attrs...)
		}
	}
	for _, cp := range w.order {
		if !cp.done {
			c.Add(incident.UnitAlloc, cp.attrs()...)
		}
	}
	w.engine.SetCensus(c)
}

func (w *world) newCopy(workload string, version, slotIndex int, n *node) *copyOf {
	w.nextID++
	c := &copyOf{id: fmt.Sprintf("a%d", w.nextID), workload: workload, version: version, slot: slotIndex, node: n, healthy: true}
	if c.web() {
		c.alloc = &api.Allocation{ID: c.id, Workload: "web", Index: slotIndex, NodeID: n.name, WorkloadVersion: uint64(version),
			DesiredStatus: api.DesiredRun, ClientStatus: api.AllocPending, CreateTime: w.time(w.now),
			TaskStates: map[string]*api.TaskState{"main": {State: "pending"}}}
	}
	w.copies[c.id] = c
	w.order = append(w.order, c)
	return c
}

// rates of trouble: what the copy's version, node and noise make them.

func (w *world) isNewBad(c *copyOf) bool { return c.web() && c.version == newVersion }

func (w *world) onBadClass(c *copyOf) bool {
	return w.isNewBad(c) && w.s.Family == OneNodeClass && c.node.hasClass(w.s.BadClass)
}

func (w *world) factor(c *copyOf) float64 {
	if w.isNewBad(c) && w.s.Family == Good {
		return w.s.GoodFactor
	}
	return 1
}

func (w *world) startFailProb(c *copyOf) float64 {
	p := w.s.StartFail * w.factor(c)
	if w.isNewBad(c) && w.s.Family == CrashOnStart || w.onBadClass(c) && w.s.BadMode == "crash" {
		p = math.Max(p, w.s.CrashProb)
	}
	return p
}

func (w *world) flipRate(c *copyOf) float64 {
	if w.isNewBad(c) && w.s.Family == FailingRequests || w.onBadClass(c) && w.s.BadMode == "flip" {
		return w.s.FlipRate
	}
	return 0
}

func (w *world) expAfter(ratePerHour float64) time.Duration {
	return time.Duration(w.rng.ExpFloat64() / ratePerHour * float64(time.Hour))
}

func (w *world) uniform(lo, hi time.Duration) time.Duration {
	return lo + time.Duration(w.rng.Int64N(int64(hi-lo)+1))
}

// start runs a copy and schedules what will go wrong with it.
func (w *world) start(c *copyOf) {
	if c.done || !c.node.up {
		return
	}
	c.running, c.started, c.healthy = true, w.now, true
	c.gen++
	at := w.time(w.now)
	if c.web() {
		c.alloc.ClientStatus, c.alloc.ClientStatusTime = api.AllocRunning, at
		c.alloc.TaskStates["main"] = &api.TaskState{State: "running", StartedAt: at, Restarts: c.crashes}
		c.alloc.Health = &api.AllocHealth{Status: api.HealthHealthy, Since: at}
		w.guard.Start(at, rolloutguard.Alloc{ID: c.id, New: c.version == newVersion, Node: c.node.name, Classes: c.node.classes})
	}
	if draw := w.rng.Float64(); draw < w.startFailProb(c) {
		// Past the base rate, the crash is the bad version's fault.
		injected := draw >= w.s.StartFail*w.factor(c)
		w.schedule(&event{at: w.now + w.uniform(2*time.Second, 30*time.Second), kind: evCrash, copy: c, gen: c.gen, what: incident.Restarted, injected: injected})
	}
	if w.isNewBad(c) && w.s.Family == SlowLeak {
		leak := time.Duration(float64(w.s.LeakMedian) * math.Exp(0.3*w.rng.NormFloat64()))
		w.schedule(&event{at: w.now + leak, kind: evCrash, copy: c, gen: c.gen, what: incident.OOMKilled, injected: true})
	}
	w.schedule(&event{at: w.now + w.expAfter(w.s.Hazard*w.factor(c)), kind: evHazard, copy: c, gen: c.gen})
	if r := w.flipRate(c); r > 0 {
		w.schedule(&event{at: w.now + w.expAfter(r), kind: evFlip, copy: c, gen: c.gen, injected: true})
	}
	for i := range w.s.Noise {
		if w.noiseOn[i] && w.strikes(i, c) {
			w.scheduleNoiseHit(i, c)
		}
	}
}

func (w *world) handle(e *event) {
	c := e.copy
	if e.kind == evNoise {
		w.noise(e.noise, e.end)
		return
	}
	if e.kind == evStart {
		if c.gen == e.gen && !c.running {
			w.start(c)
		}
		return
	}
	if c.gen != e.gen || !c.running {
		return // the copy restarted or stopped since
	}
	if e.injected {
		w.out.Faults++
		w.faultNodes[c.node.name] = true
		w.out.FaultNodes = len(w.faultNodes)
	}
	switch e.kind {
	case evCrash:
		w.crash(c, e.what)
	case evHazard:
		switch r := w.rng.Float64(); {
		case r < 0.4:
			w.crash(c, incident.Restarted)
		case r < 0.6:
			w.crash(c, incident.OOMKilled)
		default:
			w.flip(c)
			w.schedule(&event{at: w.now + w.expAfter(w.s.Hazard*w.factor(c)), kind: evHazard, copy: c, gen: c.gen})
		}
	case evFlip:
		w.flip(c)
		w.schedule(&event{at: w.now + w.expAfter(w.flipRate(c)), kind: evFlip, copy: c, gen: c.gen, injected: true})
	case evFlipEnd:
		c.healthy = true
		if c.web() {
			c.alloc.Health = &api.AllocHealth{Status: api.HealthHealthy, Since: w.time(w.now)}
		}
	case evNoiseHit:
		if !w.noiseOn[e.noise] {
			return
		}
		if w.rng.Float64() < 0.3 {
			w.crash(c, incident.Restarted)
			return
		}
		w.flip(c)
		w.scheduleNoiseHit(e.noise, c)
	}
}

// trouble tells the engine, and the guard when it is web's.
func (w *world) trouble(c *copyOf, k incident.Kind) {
	w.refs++
	ref := fmt.Sprintf("e%d", w.refs)
	at := w.time(w.now)
	if _, err := w.engine.Observe(incident.Signal{Time: at, Kind: k, Subject: c.id, Attrs: c.attrs(), Ref: ref}); err != nil {
		panic(err) // the simulator built a bad signal: a bug here
	}
	if c.web() {
		w.guard.Trouble(rolloutguard.Trouble{At: at, AllocID: c.id, Kind: k, Ref: ref})
	}
}

// flip turns one of a copy's checks failing for 10-60 s.
func (w *world) flip(c *copyOf) {
	w.trouble(c, incident.CheckFailing)
	if !c.healthy {
		return
	}
	c.healthy = false
	if c.web() {
		c.alloc.Health = &api.AllocHealth{Status: api.HealthUnhealthy, Since: w.time(w.now)}
	}
	w.schedule(&event{at: w.now + w.uniform(10*time.Second, time.Minute), kind: evFlipEnd, copy: c, gen: c.gen})
}

// crash kills a copy's task: it restarts after 10 s, and fails for good
// at its third crash (then it is replaced).
func (w *world) crash(c *copyOf, k incident.Kind) {
	c.crashes++
	c.running = false
	c.gen++
	if c.crashes >= 3 {
		k = incident.Failed
	}
	w.trouble(c, k)
	if c.web() {
		w.guard.Stop(w.time(w.now), c.id)
		c.alloc.Health = &api.AllocHealth{Status: api.HealthUnhealthy, Since: w.time(w.now)}
	}
	if c.crashes < 3 {
		w.schedule(&event{at: w.now + 10*time.Second, kind: evStart, copy: c, gen: c.gen})
		return
	}
	w.end(c, api.AllocFailed)
}

// end makes a copy terminal (failed, lost, complete).
func (w *world) end(c *copyOf, status string) {
	c.done, c.running = true, false
	c.gen++
	if !c.web() {
		w.replaceLater(c)
		return
	}
	c.alloc.ClientStatus = status
	w.guard.Stop(w.time(w.now), c.id)
	sl := w.slots[c.slot]
	switch {
	case c == sl.old:
		if status != api.AllocComplete {
			sl.old = w.newCopy("web", oldVersion, c.slot, w.place())
			w.schedule(&event{at: w.now + 30*time.Second, kind: evStart, copy: sl.old, gen: sl.old.gen})
		}
	case c == sl.new:
		sl.new, sl.failed = nil, c
	}
}

// replaceLater places a background copy's replacement 30 s on.
func (w *world) replaceLater(c *copyOf) {
	r := w.newCopy(c.workload, c.version, -1, w.place())
	w.schedule(&event{at: w.now + 30*time.Second, kind: evStart, copy: r, gen: r.gen})
}

// place picks a random node that is up.
func (w *world) place() *node {
	for {
		if n := w.nodes[w.rng.IntN(len(w.nodes))]; n.up {
			return n
		}
	}
}

func (w *world) strikes(i int, c *copyOf) bool {
	n := w.s.Noise[i]
	switch n.Kind {
	case RackNetwork:
		return c.node.rack == n.Rack
	case BadNode:
		return c.node.index == n.Node
	}
	return false
}

// scheduleNoiseHit: a rack's network trouble hits each of its copies
// about every 2 minutes, a bad node's every 3.
func (w *world) scheduleNoiseHit(i int, c *copyOf) {
	rate := 30.0
	if w.s.Noise[i].Kind == BadNode {
		rate = 20
	}
	w.schedule(&event{at: w.now + w.expAfter(rate), kind: evNoiseHit, copy: c, gen: c.gen, noise: i})
}

func (w *world) noise(i int, end bool) {
	n := w.s.Noise[i]
	if end {
		w.noiseOn[i] = false
		return
	}
	w.noiseOn[i] = true
	if n.Kind != RackDown {
		for _, c := range w.order {
			if c.running && w.strikes(i, c) {
				w.scheduleNoiseHit(i, c)
			}
		}
		return
	}
	for _, nd := range w.nodes {
		if nd.rack != n.Rack || !nd.up {
			continue
		}
		nd.up = false
		w.refs++
		if _, err := w.engine.Observe(incident.Signal{Time: w.time(w.now), Kind: incident.NodeDown, Subject: nd.name, Attrs: nd.attrs, Ref: fmt.Sprintf("e%d", w.refs)}); err != nil {
			panic(err)
		}
	}
	for _, c := range append([]*copyOf(nil), w.order...) {
		if !c.done && !c.node.up {
			w.refs++
			if _, err := w.engine.Observe(incident.Signal{Time: w.time(w.now), Kind: incident.Lost, Subject: c.id, Attrs: c.attrs(), Ref: fmt.Sprintf("e%d", w.refs)}); err != nil {
				panic(err)
			}
			w.end(c, api.AllocLost)
		}
	}
}

// roll runs the deployment's rules once.
func (w *world) roll() {
	at := w.time(w.now)
	g := rollout.Group{Policy: w.s.Update, Replicas: w.s.Replicas, MaxUnavailable: 1, Promoted: true, LastPlaced: w.lastPlaced}
	var open []*slot
	done := true
	for _, sl := range w.slots {
		if sl.new != nil && !sl.new.everGood {
			if h, _ := rollout.AllocHealth(sl.new.alloc, w.s.Update, at); h == rollout.Healthy {
				sl.new.everGood = true
				w.progress = w.now
			}
		}
		if sl.oldGone {
			if sl.new != nil {
				if h, _ := rollout.AllocHealth(sl.new.alloc, w.s.Update, at); h == rollout.Healthy {
					g.HealthyOthers++
				}
			}
			continue
		}
		done = false
		s := rollout.Slot{Old: sl.old.alloc}
		if sl.new != nil {
			s.New = sl.new.alloc
		} else if sl.failed != nil {
			s.Failed = sl.failed.alloc
		}
		g.Slots = append(g.Slots, s)
		open = append(open, sl)
	}
	if done {
		w.out.Finished, w.out.FinishedAfter = true, w.now
		return
	}
	if w.out.HealthGateAfter == 0 && w.now-w.progress > w.s.Update.ProgressDeadline {
		w.out.HealthGateAfter = w.now
	}
	dec := rollout.Decide(g, at)
	for i, a := range dec.Actions {
		sl := open[i]
		switch a {
		case rollout.StopOld:
			sl.old.alloc.DesiredStatus = api.DesiredStop
			w.end(sl.old, api.AllocComplete)
			sl.oldGone = true
		case rollout.Place:
			if sl.new == nil {
				sl.new, sl.failed = w.newCopy("web", newVersion, sl.old.slot, w.place()), nil
				w.schedule(&event{at: w.now + w.uniform(3*time.Second, 15*time.Second), kind: evStart, copy: sl.new, gen: sl.new.gen})
				w.lastPlaced = at
			}
		}
	}
}

// replaceLost re-places the new copies that failed or were lost after the
// rollout moved past their index (the scheduler's rescheduling).
func (w *world) replaceLost() {
	for _, sl := range w.slots {
		if sl.oldGone && sl.new == nil && sl.failed != nil {
			sl.new, sl.failed = w.newCopy("web", newVersion, sl.failed.slot, w.place()), nil
			w.schedule(&event{at: w.now + 30*time.Second, kind: evStart, copy: sl.new, gen: sl.new.gen})
		}
	}
}

// explain asks the engine whether an infrastructure incident that hit
// other workloads too holds the trouble's copy.
func (w *world) explain(tr rolloutguard.Trouble) bool {
	c := w.copies[tr.AllocID]
	if c == nil {
		return false
	}
	in, ok := w.engine.Explain(incident.Signal{Time: tr.At, Kind: tr.Kind, Subject: c.id, Attrs: c.attrs()})
	return ok && in.Workloads >= 2
}

func (w *world) halt(v rolloutguard.Verdict) {
	o := &w.out
	o.Halted, o.HaltedAfter, o.DuringRollout = true, w.now, !o.Finished
	o.Test, o.Reason = v.Test, v.Reason
	if v.Class != (rolloutguard.Class{}) {
		o.Class = v.Class.String()
	}
	for _, sl := range w.slots {
		if sl.oldGone || sl.new != nil && sl.new.everGood {
			o.Replaced++
		}
	}
}
