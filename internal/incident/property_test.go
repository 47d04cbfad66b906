package incident

import (
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// action is one step of a random story: a signal, or a step of the clock.
type action struct {
	step    bool
	advance time.Duration
	signal  Signal
}

func drawStory(t *rapid.T, cell *cellBuilder) []action {
	var out []action
	for i := range rapid.IntRange(1, 120).Draw(t, "actions") {
		adv := time.Duration(rapid.IntRange(0, 15).Draw(t, fmt.Sprint("adv", i))) * time.Second
		if rapid.IntRange(0, 30).Draw(t, fmt.Sprint("jump", i)) == 0 {
			adv = 6 * time.Minute // long enough to close incidents and drop signals
		}
		if rapid.IntRange(0, 4).Draw(t, fmt.Sprint("kind", i)) == 0 {
			out = append(out, action{step: true, advance: adv})
			continue
		}
		// Trouble clusters: most signals hit rack 1 or 2 (one power
		// zone), node r5-n1, or workload w3.
		r := rapid.IntRange(1, cell.racks).Draw(t, fmt.Sprint("r", i))
		n := rapid.IntRange(1, 3).Draw(t, fmt.Sprint("n", i))
		a := rapid.IntRange(1, 4).Draw(t, fmt.Sprint("a", i))
		switch rapid.IntRange(0, 9).Draw(t, fmt.Sprint("hot", i)) {
		case 0: // anywhere
		case 1, 2, 3:
			r = 1
		case 4, 5:
			r = 2
		case 6, 7:
			r, n = 5, 1
		default:
			a = 3
		}
		k := rapid.SampledFrom(Kinds).Draw(t, fmt.Sprint("k", i))
		s := cell.failed(r, n, a)
		s.Kind = k
		switch k.Unit() {
		case UnitNode:
			s.Subject, s.Attrs = fmt.Sprintf("r%d-n%d", r, n), cell.nodeAttrs(r, n)
		case UnitPlacement:
			s.Subject, s.Attrs = fmt.Sprintf("w%d", a), []Attr{{KeyWorkload, fmt.Sprintf("w%d", a)}}
		}
		s.Ref = fmt.Sprintf("e%d", i)
		out = append(out, action{advance: adv, signal: s})
	}
	return out
}

// play runs a story on a fresh engine and returns every change as text.
func play(t *rapid.T, cell *cellBuilder, p Policy, story []action, check func(e *Engine, observed int)) string {
	e := New(p)
	e.SetCensus(cell.census)
	now := day(12, 0, 0)
	out, observed := "", 0
	for _, a := range story {
		now = now.Add(a.advance)
		if a.step {
			out += renderChanges(e.Step(now))
		} else {
			a.signal.Time = now
			if _, err := e.Observe(a.signal); err != nil {
				t.Fatal(err)
			}
			observed++
		}
		check(e, observed)
	}
	return out
}

// TestPropertyEngine: whatever the story, the engine stays within its
// bounds, every signal is accounted for (waiting, dropped, or in exactly
// one incident), every signal of an incident carries its cause, and the
// same story gives the same incidents.
func TestPropertyEngine(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cell := newCell(16, 3, 4)
		p := Policy{
			Window:   time.Duration(rapid.IntRange(1, 10).Draw(t, "window")) * time.Minute,
			Quiet:    time.Duration(rapid.IntRange(1, 10).Draw(t, "quiet")) * time.Minute,
			MinNodes: 1, MinLift: 1.5, Alpha: 0.05,
			MaxPending: rapid.IntRange(1, 30).Draw(t, "maxPending"),
			MaxOpen:    rapid.IntRange(1, 4).Draw(t, "maxOpen"),
			MaxClosed:  1 << 20, // none forgotten, so the accounting can be checked
			MaxTracked: rapid.IntRange(1, 6).Draw(t, "maxTracked"),
			MaxRefs:    rapid.IntRange(1, 5).Draw(t, "maxRefs"),
			MaxLinks:   rapid.IntRange(1, 20).Draw(t, "maxLinks"),
		}.WithDefaults()
		story := drawStory(t, cell)
		check := func(e *Engine, observed int) {
			if e.Pending() > p.MaxPending || len(e.open) > p.MaxOpen || len(e.links) > p.MaxLinks || len(e.linkOrder) != len(e.links) {
				t.Fatalf("bounds: pending %d open %d links %d/%d", e.Pending(), len(e.open), len(e.links), len(e.linkOrder))
			}
			inIncidents := 0
			for _, in := range append(append([]*Incident{}, e.open...), e.closed...) {
				if len(in.Refs) > p.MaxRefs || len(in.nodes) > p.MaxTracked || len(in.workloads) > p.MaxTracked {
					t.Fatalf("incident %s over its bounds", in.ID)
				}
				for _, u := range Units {
					if len(in.tracked[u]) > p.MaxTracked || in.Subjects[u] != len(in.tracked[u]) {
						t.Fatalf("incident %s tracks %d %s, counts %d", in.ID, len(in.tracked[u]), u, in.Subjects[u])
					}
				}
				if in.Open() && !in.carries(in.Cause.Attr) {
					t.Fatalf("open incident %s: not every signal carries its cause %s (common %v)", in.ID, in.Cause, in.common)
				}
				if in.MergedInto == "" {
					inIncidents += in.Signals
				}
			}
			if got := e.Pending() + e.Dropped() + inIncidents; got != observed {
				t.Fatalf("%d signals observed, %d accounted for (pending %d, dropped %d, in incidents %d)",
					observed, got, e.Pending(), e.Dropped(), inIncidents)
			}
		}
		first := play(t, cell, p, story, check)
		if again := play(t, cell, p, story, func(*Engine, int) {}); again != first {
			t.Fatalf("the same story gave different incidents:\n%s\n---\n%s", first, again)
		}
	})
}

// TestClosedIncidentsAreBounded: past MaxClosed the oldest are forgotten,
// and so are the links to them.
func TestClosedIncidentsAreBounded(t *testing.T) {
	cell := newCell(10, 5, 10)
	e := New(Policy{Quiet: time.Minute, MaxClosed: 2})
	e.SetCensus(cell.census)
	now := day(12, 0, 0)
	var first string
	for n := 1; n <= 5; n++ {
		for a := 1; a <= 4; a++ {
			s := cell.failed(n, n, a)
			s.Time, s.Ref = now, fmt.Sprintf("n%d-a%d", n, a)
			mustObserve(t, e, s)
		}
		e.Step(now)
		if first == "" {
			first, _ = e.IncidentOf("n1-a1")
		}
		now = now.Add(2 * time.Minute)
		e.Step(now)
	}
	if got := len(e.Closed()); got != 2 {
		t.Fatalf("%d closed incidents kept, want 2", got)
	}
	if _, ok := e.Get(first); ok {
		t.Fatalf("the first incident %s is still kept", first)
	}
}
