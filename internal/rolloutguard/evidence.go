package rolloutguard

import "time"

// record is one trouble that settled: a failed start of a new copy, or an
// event of a copy past its start window.
type record struct {
	trouble Trouble
	copy    *copyState
	inStart bool
	start   time.Time // the copy's start it came after
	// shares is the new version's share of the mature running copies of
	// each stratum when it came (stratum index → share); nil for starts.
	shares []float64
	// counted: it weighs in the tests now (not capped, not explained);
	// explained: the cell explained it (for good).
	counted, explained bool
	// deltas are what it added to each stratum's test beside the old
	// version (stratum index → per ratio), to take back if explained.
	deltas [][]float64
}

// tally counts distinct keys with multiplicity, so that evidence can be
// taken back.
type tally map[string]int

func (t tally) add(k string, n int) {
	t[k] += n
	if t[k] <= 0 {
		delete(t, k)
	}
}

// stratum holds the three tests on the copies of one class of nodes (the
// zero class: all copies). The tests of failed starts and against the past
// are functions of counts (startFailures, startSuccesses; historyEvents,
// exposureHours); the test beside the old version sums each event's own
// likelihood ratio (its null probability changes with the copies running).
type stratum struct {
	class  Class
	ratios []float64
	beside *mixture

	startFailures, startSuccesses int
	historyEvents                 int
	exposureHours                 float64
	eventsNew, eventsOld          int
	expectedNew                   float64
	newCopies                     int // new copies seen in it

	// The new copies and their nodes behind each test's evidence.
	startAllocs, startNodes     tally
	besideAllocs, besideNodes   tally
	historyAllocs, historyNodes tally
}

func newStratum(c Class, ratios []float64) *stratum {
	return &stratum{
		class: c, ratios: ratios, beside: newMixture(ratios),
		startAllocs: tally{}, startNodes: tally{}, besideAllocs: tally{}, besideNodes: tally{},
		historyAllocs: tally{}, historyNodes: tally{},
	}
}

func (s *stratum) holds(a Alloc) bool {
	if s.class == (Class{}) {
		return true
	}
	for _, c := range a.Classes {
		if c == s.class {
			return true
		}
	}
	return false
}

// startMixture is the test of failed starts against the baseline p0.
func (s *stratum) startMixture(p0 float64) *mixture {
	m := newMixture(s.ratios)
	for j, d := range bernoulliDeltas(s.ratios, p0, true) {
		m.logLR[j] += float64(s.startFailures) * d
	}
	for j, d := range bernoulliDeltas(s.ratios, p0, false) {
		m.logLR[j] += float64(s.startSuccesses) * d
	}
	return m
}

// historyMixture is the test against the past rate λ0 per copy-hour.
func (s *stratum) historyMixture(rate float64) *mixture {
	m := newMixture(s.ratios)
	if rate <= 0 || rate > 1e300 {
		return m // no baseline: the test is inert
	}
	for range s.historyEvents {
		m.poissonEvent()
	}
	m.poissonExposure(rate * s.exposureHours)
	return m
}

// weigh adds (sign 1) or takes back (sign −1) a record's evidence.
func (g *Guard) weigh(r *record, sign int) {
	c := r.copy
	a := c.alloc
	if r.inStart {
		c.starts += sign
	} else {
		c.events += sign
	}
	g.perNode[a.Node] += sign
	f := float64(sign)
	if r.deltas == nil && !r.inStart {
		r.deltas = make([][]float64, len(r.shares))
	}
	for i, s := range g.strata {
		if !s.holds(a) {
			continue
		}
		if r.inStart {
			s.startFailures += sign
			s.startAllocs.add(a.ID, sign)
			s.startNodes.add(a.Node, sign)
			continue
		}
		if i < len(r.shares) {
			share := r.shares[i]
			if sign > 0 {
				r.deltas[i] = bernoulliDeltas(s.ratios, share, a.New)
			}
			s.beside.add(r.deltas[i], f)
			if r.deltas[i] != nil {
				s.expectedNew += f * share
				if a.New {
					s.eventsNew += sign
					s.besideAllocs.add(a.ID, sign)
					s.besideNodes.add(a.Node, sign)
				} else {
					s.eventsOld += sign
				}
			}
		}
		if a.New && g.baseRate < 1e300 {
			s.historyEvents += sign
			s.historyAllocs.add(a.ID, sign)
			s.historyNodes.add(a.Node, sign)
		}
	}
}

// settle moves the trouble that waited Settle into the records, counting
// what the caps and the explanation let count.
func (g *Guard) settle(now time.Time, explain func(Trouble) bool) {
	cut := 0
	for _, r := range g.queue {
		if now.Sub(r.trouble.At) < g.policy.Settle {
			break
		}
		cut++
		c := r.copy
		if r.inStart && c.start.Equal(r.start) {
			c.startTroubled = false // its start has its outcome now
		}
		if explain != nil && explain(r.trouble) {
			r.explained = true
			g.explained++
			continue
		}
		g.records = append(g.records, r)
		g.count(r)
	}
	g.queue = g.queue[cut:]
}

// count weighs a record if the caps leave it room.
func (g *Guard) count(r *record) {
	c := r.copy
	if r.inStart && (!c.alloc.New || c.starts >= g.policy.MaxStartsPerAlloc) {
		return
	}
	if !r.inStart && c.events >= g.policy.MaxEventsPerAlloc {
		return
	}
	if g.perNode[c.alloc.Node] >= g.policy.MaxPerNode {
		return
	}
	r.counted = true
	g.weigh(r, 1)
}

// reexplain asks again about the records of the last Lookback: an
// infrastructure incident often opens minutes after its first trouble,
// and what it explains is taken back from the tests. Records older than
// Lookback are kept only while they count.
func (g *Guard) reexplain(now time.Time, explain func(Trouble) bool) {
	if explain == nil {
		return
	}
	kept := g.records[:0]
	for _, r := range g.records {
		if now.Sub(r.trouble.At) > g.policy.Lookback {
			if r.counted {
				kept = append(kept, r)
			}
			continue
		}
		if explain(r.trouble) {
			r.explained = true
			g.explained++
			if r.counted {
				g.weigh(r, -1)
				r.counted = false
			}
			continue
		}
		kept = append(kept, r)
	}
	g.records = kept
}
