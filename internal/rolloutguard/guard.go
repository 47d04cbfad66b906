package rolloutguard

import (
	"math"
	"slices"
	"time"

	"github.com/strata-dev/strata/internal/incident"
)

// Class is one class of nodes the guard judges apart: a node label and
// its value ("class" "gen4", "cpu.feature.avx512f" "true").
type Class struct {
	Key, Value string
}

func (c Class) String() string { return c.Key + "=" + c.Value }

// Alloc is one copy of the deployment's workload, old or new.
type Alloc struct {
	ID string
	// New: it runs the deployment's version; else an older one.
	New  bool
	Node string
	// Classes are its node's classes, at most one value per key.
	Classes []Class
}

// Trouble is something that went wrong with a copy: it failed, was
// OOM-killed, restarted, or a health check turned failing. Other kinds
// (lost with its node, unhealthy) are not the version's doing, or repeat
// a check's failure, and are ignored.
type Trouble struct {
	At      time.Time
	AllocID string
	Kind    incident.Kind
	// Ref names the event, for the caller's explanation.
	Ref string
}

func counted(k incident.Kind) bool {
	switch k {
	case incident.Failed, incident.OOMKilled, incident.Restarted, incident.CheckFailing:
		return true
	}
	return false
}

// Baseline is what the old version did before the deployment.
type Baseline struct {
	// Starts of its copies and how many failed within the start window.
	Starts, FailedStarts int
	// Events of trouble of its copies past their start window, over
	// Exposure of copy-time.
	Events   int
	Exposure time.Duration
}

// Deployment is what the guard judges.
type Deployment struct {
	ID                   string
	Version, FromVersion uint64
	Baseline             Baseline
	// Classes is how many node classes the cell has: each is judged
	// apart, and the tests are corrected for their number.
	Classes int
}

// copyState is what the guard knows of one copy.
type copyState struct {
	alloc   Alloc
	running bool
	start   time.Time // its latest start
	// startOpen: the latest start's window has not passed and no trouble
	// came in it; startTroubled: trouble came in it (waiting to settle).
	startOpen, startTroubled bool
	// starts and events count what it adds to the evidence now (bounded
	// by the policy; an explanation gives the room back).
	starts, events int
}

// Guard judges one deployment. It is not safe for concurrent use.
type Guard struct {
	policy     Policy
	deployment Deployment
	copies     map[string]*copyState
	order      []*copyState // in the order first seen, for determinism
	strata     []*stratum
	queue      []*record // trouble waiting Settle, oldest first
	records    []*record // trouble counted, oldest first
	perNode    map[string]int
	now        time.Time

	baseStart float64 // the old version's start failure rate, bounded above
	baseRate  float64 // its trouble rate per copy-hour, bounded above
	// allThreshold is log(3 / (α·AllShare)), the bar of the tests of all
	// copies; classThreshold log(3·classes / (α·(1−AllShare))), that of
	// each class's.
	allThreshold, classThreshold float64

	explained int
	verdict   Verdict
}

// New returns a guard for d.
func New(d Deployment, p Policy) *Guard {
	p = p.WithDefaults()
	b := d.Baseline
	g := &Guard{
		policy: p, deployment: d, copies: map[string]*copyState{}, perNode: map[string]int{},
		baseStart: wilsonUpper(b.FailedStarts, b.Starts, p.Confidence, p.StartFloor),
		baseRate:  poissonUpper(b.Events, b.Exposure.Hours(), p.Confidence),
	}
	g.allThreshold = math.Log(3 / (p.Alpha * p.AllShare))
	g.classThreshold = math.Log(3 * float64(max(1, d.Classes)) / (p.Alpha * (1 - p.AllShare)))
	g.strata = []*stratum{newStratum(Class{}, p.Ratios)}
	return g
}

// Start tells that a copy started running at t (placed, or restarted).
func (g *Guard) Start(t time.Time, a Alloc) {
	g.advance(t)
	c := g.copies[a.ID]
	if c == nil {
		c = &copyState{alloc: a}
		g.copies[a.ID] = c
		g.order = append(g.order, c)
		for _, cl := range a.Classes {
			if !slices.ContainsFunc(g.strata, func(s *stratum) bool { return s.class == cl }) {
				g.strata = append(g.strata, newStratum(cl, g.policy.Ratios))
			}
		}
		if a.New {
			for _, s := range g.strata {
				if s.holds(a) {
					s.newCopies++
				}
			}
		}
	}
	c.running, c.start, c.startOpen, c.startTroubled = true, t, true, false
}

// Stop tells that a copy stopped running at t (crashed, stopped, lost).
func (g *Guard) Stop(t time.Time, id string) {
	g.advance(t)
	if c := g.copies[id]; c != nil {
		c.running = false
		c.startOpen = false // a start cut short by a stop is no outcome
	}
}

// Trouble tells of trouble with a copy; it counts once it has waited
// Settle (Judge). Trouble of copies never started is ignored.
func (g *Guard) Trouble(tr Trouble) {
	c := g.copies[tr.AllocID]
	if c == nil || !counted(tr.Kind) {
		return
	}
	g.advance(tr.At)
	r := &record{trouble: tr, copy: c, start: c.start, inStart: tr.At.Sub(c.start) < g.policy.StartWindow && (c.startOpen || c.startTroubled)}
	if r.inStart {
		if c.startTroubled {
			return // the start has failed already: one outcome a start
		}
		c.startOpen, c.startTroubled = false, true
	} else {
		r.shares = make([]float64, len(g.strata))
		for i, s := range g.strata {
			r.shares[i] = g.newShare(s, tr.At)
		}
	}
	g.queue = append(g.queue, r)
}

// newShare is the new version's share of the mature running copies in s
// at t (those past their start window): the chance that an event falls on
// the new version if both are alike.
func (g *Guard) newShare(s *stratum, t time.Time) float64 {
	var newer, all int
	for _, c := range g.order {
		if c.running && !t.Before(c.start.Add(g.policy.StartWindow)) && s.holds(c.alloc) {
			all++
			if c.alloc.New {
				newer++
			}
		}
	}
	if all == 0 {
		return 0
	}
	return float64(newer) / float64(all)
}

// advance moves the guard's time to t: the new copies' exposure since the
// last move goes to the tests against the past, and starts whose window
// passed without trouble count as good starts.
func (g *Guard) advance(t time.Time) {
	if !t.After(g.now) {
		return
	}
	from := g.now
	g.now = t
	for _, c := range g.order {
		if !c.alloc.New {
			continue
		}
		if c.running {
			begin := c.start.Add(g.policy.StartWindow)
			if begin.Before(from) {
				begin = from
			}
			if hours := t.Sub(begin).Hours(); hours > 0 {
				for _, s := range g.strata {
					if s.holds(c.alloc) {
						s.exposureHours += hours
					}
				}
			}
		}
		if c.startOpen && !t.Before(c.start.Add(g.policy.StartWindow)) {
			c.startOpen = false
			if c.starts < g.policy.MaxStartsPerAlloc {
				c.starts++
				for _, s := range g.strata {
					if s.holds(c.alloc) {
						s.startSuccesses++
					}
				}
			}
		}
	}
}
