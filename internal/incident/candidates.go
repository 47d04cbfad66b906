package incident

import (
	"fmt"
	"math"
	"sort"

	"github.com/strata-dev/strata/internal/stats"
)

// Cause is a candidate cause with the evidence for it.
type Cause struct {
	Attr
	Noun  string
	Infra bool
	// Unit is what the evidence mostly counts: the unit with the most
	// troubled subjects sharing the cause.
	Unit Unit
	// Support of Of troubled subjects of Unit share the cause; the cause
	// holds Share of the cell's Unit (smoothed), so Lift is
	// (Support/Of)/Share.
	Support, Of int
	Share, Lift float64
	// Nodes counts the distinct nodes among the troubled that share it.
	Nodes int
	// LogP is the natural log of the p-value, every unit combined and
	// corrected for the Tested values (Bonferroni).
	LogP   float64
	Tested int
}

func (c Cause) String() string { return c.Noun + " " + c.Value }

// P is the corrected p-value in words ("3.1e-19"), also below the
// smallest float64.
func (c Cause) P() string { return formatLogP(c.LogP) }

// Evidence says why, in words: "12 of 14 troubled allocations, 2.5 % of
// the cell's (lift 34); p ≈ 3.1e-19 over 24 values".
func (c Cause) Evidence() string {
	return fmt.Sprintf("%d of %d troubled %s, %s of the cell's (lift %.3g); p ≈ %s over %d values",
		c.Support, c.Of, plural(c.Of, string(c.Unit)), percent(c.Share), c.Lift, c.P(), c.Tested)
}

// admissible reports whether the cause may open an incident under p.
func (c Cause) admissible(p Policy) bool {
	return c.Support >= p.MinSupport &&
		(c.Key == KeyNode || c.Nodes >= p.MinNodes) &&
		c.Lift >= p.MinLift &&
		c.Share <= p.MaxShare &&
		c.LogP <= math.Log(p.Alpha)
}

// better orders causes: the more significant first; then the narrower
// (smaller share), the earlier key of the policy, the smaller value.
func better(a, b Cause, p Policy) bool {
	if a.LogP != b.LogP {
		return a.LogP < b.LogP
	}
	if a.Share != b.Share {
		return a.Share < b.Share
	}
	if ka, kb := keyRank(p, a.Key), keyRank(p, b.Key); ka != kb {
		return ka < kb
	}
	return a.Value < b.Value
}

func keyRank(p Policy, key string) int {
	for i, k := range p.Keys {
		if k.Name == key {
			return i
		}
	}
	return len(p.Keys)
}

// subjects is a set of distinct subjects per unit.
type subjects map[Unit]map[string]bool

func (s subjects) add(u Unit, subject string) {
	if s[u] == nil {
		s[u] = map[string]bool{}
	}
	s[u][subject] = true
}

// candidates scores every value of a policy key that sigs carry: are
// the troubled subjects that share it more than its share of the cell
// lets one expect? Per unit, the count k of n troubled subjects that
// share a value is tested against Binomial(n, share) (the chance that
// trouble striking at random falls on the value k times or more); the
// units' tests combine by Fisher's method, and the result is multiplied
// by the number of values tested. Best first; not all are admissible.
func candidates(sigs []Signal, census *Census, p Policy) []Cause {
	all := subjects{}
	type tally struct {
		subjects subjects
		nodes    map[string]bool
	}
	byAttr := map[Attr]*tally{}
	for _, s := range sigs {
		u := s.Kind.Unit()
		all.add(u, s.Subject)
		node := s.attr(KeyNode)
		for _, a := range s.Attrs {
			if _, ok := p.key(a.Key); !ok || a.Value == "" {
				continue
			}
			t := byAttr[a]
			if t == nil {
				t = &tally{subjects: subjects{}, nodes: map[string]bool{}}
				byAttr[a] = t
			}
			t.subjects.add(u, s.Subject)
			if node != "" {
				t.nodes[node] = true
			}
		}
	}
	tested := len(byAttr)
	out := make([]Cause, 0, tested)
	for a, t := range byAttr {
		key, _ := p.key(a.Key)
		c := Cause{Attr: a, Noun: key.Noun, Infra: key.Infra, Nodes: len(t.nodes), Tested: tested}
		var logPs []float64
		for _, u := range Units {
			n, k := len(all[u]), len(t.subjects[u])
			if n == 0 || (k == 0 && !census.carries(u, a.Key)) {
				continue // the unit says nothing about this key
			}
			share := smoothedShare(census, u, a, k, n)
			logPs = append(logPs, stats.LogBinomialTail(n, k, share))
			if k > c.Support {
				c.Unit, c.Support, c.Of, c.Share = u, k, n, share
				c.Lift = float64(k) / float64(n) / share
			}
		}
		c.LogP = math.Min(0, stats.LogFisherCombine(logPs...)+math.Log(float64(tested)))
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return better(out[i], out[j], p) })
	return out
}

// smoothedShare is a's share of the cell's u, never below what the
// troubled themselves prove exists (k of n), and pulled off 0 by half a
// unit so that a value the census missed is not infinitely unlikely.
func smoothedShare(census *Census, u Unit, a Attr, k, n int) float64 {
	count := max(census.Count(u, a), k)
	total := max(census.Total(u), n, count)
	return (float64(count) + 0.5) / (float64(total) + 1)
}

// nodeCause tests a wider infrastructure value against the troubled nodes
// alone (k of n nodes share it), the unit in which the trouble of two racks
// is two or three independent draws rather than dozens of allocations.
func nodeCause(a Attr, key Key, k, n int, census *Census, tested int) Cause {
	share := smoothedShare(census, UnitNode, a, k, n)
	return Cause{
		Attr: a, Noun: key.Noun, Infra: key.Infra, Unit: UnitNode,
		Support: k, Of: n, Share: share, Lift: float64(k) / float64(n) / share, Nodes: k,
		LogP:   math.Min(0, stats.LogBinomialTail(n, k, share)+math.Log(float64(max(tested, 1)))),
		Tested: tested,
	}
}

// formatLogP writes e^logP in scientific notation, also far below the
// smallest float64.
func formatLogP(logP float64) string {
	if math.IsInf(logP, -1) {
		return "0"
	}
	e10 := logP / math.Ln10
	exp := math.Floor(e10)
	mant := math.Pow(10, e10-exp)
	if mant >= 9.95 {
		mant, exp = 1, exp+1
	}
	if exp >= -2 {
		return fmt.Sprintf("%.2g", math.Exp(logP))
	}
	return fmt.Sprintf("%.1fe%d", mant, int(exp))
}

func percent(f float64) string {
	switch {
	case f >= 0.1:
		return fmt.Sprintf("%.0f %%", f*100)
	case f >= 0.01:
		return fmt.Sprintf("%.1f %%", f*100)
	}
	return fmt.Sprintf("%.2g %%", f*100)
}

func plural(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}
