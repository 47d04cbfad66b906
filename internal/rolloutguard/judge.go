package rolloutguard

import "time"

// The tests, as verdicts name them.
const (
	TestStarts  = "failed starts"
	TestBeside  = "beside the old version"
	TestHistory = "against the old version's past"
)

// Judge moves the guard to now, counts the trouble that has settled —
// unless explain, asked about each, says the cell explains it otherwise,
// now or within Lookback — and returns the verdict (sticky once it
// halts). explain may be nil.
func (g *Guard) Judge(now time.Time, explain func(Trouble) bool) Verdict {
	g.advance(now)
	if g.verdict.Halt {
		return g.verdict
	}
	g.settle(now, explain)
	g.reexplain(now, explain)
	if v, ok := g.decide(now); ok {
		g.verdict = v
	}
	return g.verdict
}

// decide returns the first test of a stratum whose likelihood ratio passed
// its threshold with enough copies and nodes behind it.
func (g *Guard) decide(at time.Time) (Verdict, bool) {
	for _, s := range g.strata {
		threshold := g.classThreshold
		if s.class == (Class{}) {
			threshold = g.allThreshold
		}
		for _, t := range []struct {
			name          string
			m             *mixture
			allocs, nodes tally
		}{
			{TestStarts, s.startMixture(g.baseStart), s.startAllocs, s.startNodes},
			{TestBeside, s.beside, s.besideAllocs, s.besideNodes},
			{TestHistory, s.historyMixture(g.baseRate), s.historyAllocs, s.historyNodes},
		} {
			if t.m.logValue() < threshold || len(t.allocs) < g.policy.MinAllocs || len(t.nodes) < g.policy.MinNodes {
				continue
			}
			v := Verdict{Halt: true, At: at, Test: t.name, Class: s.class, LogLR: t.m.logValue(), LogThreshold: threshold,
				Allocs: len(t.allocs), Nodes: len(t.nodes)}
			where := s
			if s.class == (Class{}) {
				if c := g.narrowest(t.name, len(t.allocs)); c != nil {
					v.Class, where = c.class, c // the evidence is all of one class: say so
				}
			}
			v.Reason = g.reason(v, where, t.m.bestRatio())
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
	// LogLR is the log likelihood ratio that passed LogThreshold (the
	// test's share of α, inverted); Allocs and Nodes the new copies and
	// nodes behind it.
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
		Verdict: g.verdict, StartTrials: s.startFailures + s.startSuccesses, StartFailures: s.startFailures, BaselineStartRate: g.baseStart,
		EventsNew: s.eventsNew, EventsOld: s.eventsOld, ExpectedNew: s.expectedNew,
		ExposureHours: s.exposureHours, HistoryEvents: s.historyEvents, BaselineRate: g.baseRate,
		Explained: g.explained, Waiting: len(g.queue),
	}
}

// narrowest is the class stratum with the fewest new copies that holds all
// n copies behind a test of all copies, when it does not hold every new
// copy; nil when none: the version is bad everywhere.
func (g *Guard) narrowest(test string, n int) *stratum {
	var best *stratum
	for _, s := range g.strata[1:] {
		var behind tally
		switch test {
		case TestStarts:
			behind = s.startAllocs
		case TestBeside:
			behind = s.besideAllocs
		default:
			behind = s.historyAllocs
		}
		if len(behind) == n && s.newCopies < g.strata[0].newCopies && (best == nil || s.newCopies < best.newCopies) {
			best = s
		}
	}
	return best
}
