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

// The tests, as verdicts name them.
const (
	TestStarts  = "failed starts"
	TestBeside  = "beside the old version"
	TestHistory = "against the old version's past"
)

// evidence is the new copies and their nodes that weighed against the
// version in one test: a verdict needs enough of both.
type evidence struct {
	allocs, nodes map[string]bool
}

func newEvidence() evidence { return evidence{allocs: map[string]bool{}, nodes: map[string]bool{}} }

func (e evidence) add(a Alloc) { e.allocs[a.ID], e.nodes[a.Node] = true, true }

// stratum holds the three tests on the copies of one class of nodes (the
// zero class: all copies).
type stratum struct {
	class                   Class
	starts, beside, history *mixture
	startEvidence           evidence
	besideEvidence          evidence
	historyEvidence         evidence

	startTrials, startFailures int
	eventsNew, eventsOld       int
	expectedNew                float64 // Σ of the new version's running share over the events beside
	historyEvents              int
	exposureHours              float64
}

func (s *stratum) holds(a Alloc) bool {
	return s.class == (Class{}) || slices.Contains(a.Classes, s.class)
}

// copyState is what the guard knows of one copy.
type copyState struct {
	alloc   Alloc
	running bool
	start   time.Time // its latest start
	// startOpen: the latest start's window has not passed and no trouble
	// came in it; startTroubled: trouble came in it (waiting to settle).
	startOpen, startTroubled bool
	starts, events           int // counted so far (bounded by the policy)
}

// queued is a trouble waiting Settle, with what was true when it came.
type queued struct {
	trouble Trouble
	copy    *copyState
	inStart bool
	// share is the new version's share of the mature running copies of
	// each stratum when it came (stratum index → share).
	share []float64
}

// Guard judges one deployment. It is not safe for concurrent use.
type Guard struct {
	policy     Policy
	deployment Deployment
	copies     map[string]*copyState
	order      []*copyState // in the order first seen, for determinism
	strata     []*stratum
	queue      []queued
	now        time.Time

	baseStart float64 // the old version's start failure rate, bounded above
	baseRate  float64 // its trouble rate per copy-hour, bounded above
	threshold float64 // log(tests / α)

	explained int
	verdict   Verdict
}

// New returns a guard for d.
func New(d Deployment, p Policy) *Guard {
	p = p.WithDefaults()
	b := d.Baseline
	g := &Guard{
		policy: p, deployment: d, copies: map[string]*copyState{},
		baseStart: wilsonUpper(b.FailedStarts, b.Starts, p.Confidence, p.StartFloor),
		baseRate:  poissonUpper(b.Events, b.Exposure.Hours(), p.Confidence),
	}
	tests := 3 * (1 + max(0, d.Classes))
	g.threshold = math.Log(float64(tests) / p.Alpha)
	g.strata = []*stratum{g.newStratum(Class{})}
	return g
}

func (g *Guard) newStratum(c Class) *stratum {
	return &stratum{
		class:  c,
		starts: newMixture(g.policy.Ratios), beside: newMixture(g.policy.Ratios), history: newMixture(g.policy.Ratios),
		startEvidence: newEvidence(), besideEvidence: newEvidence(), historyEvidence: newEvidence(),
	}
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
				g.strata = append(g.strata, g.newStratum(cl))
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
	q := queued{trouble: tr, copy: c, inStart: tr.At.Sub(c.start) < g.policy.StartWindow && (c.startOpen || c.startTroubled)}
	if q.inStart {
		if c.startTroubled {
			return // the start has failed already: one outcome a start
		}
		c.startOpen, c.startTroubled = false, true
	} else {
		q.share = make([]float64, len(g.strata))
		for i, s := range g.strata {
			q.share[i] = g.newShare(s, tr.At)
		}
	}
	g.queue = append(g.queue, q)
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
// last move goes into the tests against the past, and starts whose window
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
		if c.running && !math.IsInf(g.baseRate, 1) {
			begin := c.start.Add(g.policy.StartWindow)
			if begin.Before(from) {
				begin = from
			}
			if hours := t.Sub(begin).Hours(); hours > 0 {
				for _, s := range g.strata {
					if s.holds(c.alloc) {
						s.history.poissonExposure(g.baseRate * hours)
						s.exposureHours += hours
					}
				}
			}
		}
		if c.startOpen && !t.Before(c.start.Add(g.policy.StartWindow)) {
			c.startOpen = false
			g.startOutcome(c, false)
		}
	}
}

// startOutcome counts one start of a new copy in every stratum it holds.
func (g *Guard) startOutcome(c *copyState, failed bool) {
	if !c.alloc.New || c.starts >= g.policy.MaxStartsPerAlloc {
		return
	}
	c.starts++
	for _, s := range g.strata {
		if !s.holds(c.alloc) {
			continue
		}
		s.starts.bernoulli(g.baseStart, failed)
		s.startTrials++
		if failed {
			s.startFailures++
			s.startEvidence.add(c.alloc)
		}
	}
}

// Judge moves the guard to now, counts the trouble that has settled —
// unless explain, asked about each, says the cell explains it otherwise —
// and returns the verdict (sticky once it halts). explain may be nil.
func (g *Guard) Judge(now time.Time, explain func(Trouble) bool) Verdict {
	g.advance(now)
	if g.verdict.Halt {
		return g.verdict
	}
	cut := 0
	for _, q := range g.queue {
		if now.Sub(q.trouble.At) < g.policy.Settle {
			break
		}
		cut++
		g.count(q, explain != nil && explain(q.trouble))
		if v, ok := g.decide(q.trouble.At); ok {
			g.verdict = v
			break
		}
	}
	g.queue = slices.Delete(g.queue, 0, cut)
	return g.verdict
}

// count weighs one settled trouble.
func (g *Guard) count(q queued, explained bool) {
	c := q.copy
	if explained {
		g.explained++
		if q.inStart {
			c.startTroubled = false // no outcome: the start met an outside cause
		}
		return
	}
	if q.inStart {
		c.startTroubled = false
		g.startOutcome(c, true)
		return
	}
	if c.events >= g.policy.MaxEventsPerAlloc {
		return
	}
	c.events++
	for i, s := range g.strata {
		if i >= len(q.share) || !s.holds(c.alloc) {
			continue
		}
		s.beside.bernoulli(q.share[i], c.alloc.New)
		if q.share[i] > 0 && q.share[i] < 1 {
			s.expectedNew += q.share[i]
			if c.alloc.New {
				s.eventsNew++
				s.besideEvidence.add(c.alloc)
			} else {
				s.eventsOld++
			}
		}
		if c.alloc.New && !math.IsInf(g.baseRate, 1) {
			s.history.poissonEvent()
			s.historyEvents++
			s.historyEvidence.add(c.alloc)
		}
	}
}

// decide returns the first test of a stratum whose likelihood ratio passed
// the threshold with enough copies and nodes behind it.
func (g *Guard) decide(at time.Time) (Verdict, bool) {
	for _, s := range g.strata {
		for _, t := range []struct {
			name string
			m    *mixture
			ev   evidence
		}{
			{TestStarts, s.starts, s.startEvidence},
			{TestBeside, s.beside, s.besideEvidence},
			{TestHistory, s.history, s.historyEvidence},
		} {
			if t.m.logValue() < g.threshold || len(t.ev.allocs) < g.policy.MinAllocs || len(t.ev.nodes) < g.policy.MinNodes {
				continue
			}
			v := Verdict{Halt: true, At: at, Test: t.name, Class: s.class, LogLR: t.m.logValue(), LogThreshold: g.threshold,
				Allocs: len(t.ev.allocs), Nodes: len(t.ev.nodes)}
			v.Reason = g.reason(v, s, t.m.bestRatio())
			return v, true
		}
	}
	return Verdict{}, false
}

// Verdict is the guard's judgement.
type Verdict struct {
	// Halt: the version is bad; pause or revert the deployment.
	Halt bool
	At   time.Time
	// Test is the test that found it, Class the node class it holds on
	// (zero: all copies).
	Test  string
	Class Class
	// LogLR is the log likelihood ratio that passed LogThreshold
	// (log(tests/α)); Allocs and Nodes the new copies and nodes behind it.
	LogLR, LogThreshold float64
	Allocs, Nodes       int
	// Reason says it in words, for the deployment's status and its event.
	Reason string
}

// Status is what the guard has seen, for `strata deployment status`.
type Status struct {
	Verdict Verdict
	// StartTrials and StartFailures count the new version's judged starts
	// against BaselineStartRate (the old version's, bounded above).
	StartTrials, StartFailures int
	BaselineStartRate          float64
	// EventsNew and EventsOld count the trouble beside the old version;
	// ExpectedNew is how many of them the new version would have had,
	// were it alike.
	EventsNew, EventsOld int
	ExpectedNew          float64
	// ExposureHours of new copies past their start window, their
	// HistoryEvents, against BaselineRate per copy-hour (+Inf: no
	// baseline).
	ExposureHours float64
	HistoryEvents int
	BaselineRate  float64
	// Explained counts trouble the cell explained otherwise; Waiting the
	// trouble still settling.
	Explained, Waiting int
}

// Status returns what the guard has seen on all copies.
func (g *Guard) Status() Status {
	s := g.strata[0]
	return Status{
		Verdict: g.verdict, StartTrials: s.startTrials, StartFailures: s.startFailures, BaselineStartRate: g.baseStart,
		EventsNew: s.eventsNew, EventsOld: s.eventsOld, ExpectedNew: s.expectedNew,
		ExposureHours: s.exposureHours, HistoryEvents: s.historyEvents, BaselineRate: g.baseRate,
		Explained: g.explained, Waiting: len(g.queue),
	}
}
