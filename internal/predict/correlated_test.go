package predict

import (
	"errors"
	"fmt"
	"testing"
)

func fleetPlaces(racks, perRack int) []Place {
	var out []Place
	for r := range racks {
		for n := range perRack {
			out = append(out, Place{Node: fmt.Sprintf("r%d-n%d", r, n), Rack: fmt.Sprint("r", r), Room: fmt.Sprint("m", r%2)})
		}
	}
	return out
}

func TestCorrelatedLearnsThatFailuresComeTogether(t *testing.T) {
	const dayS = 86400
	m, err := NewCorrelated(DefaultCorrelated, fleetPlaces(40, 5))
	if err != nil {
		t.Fatal(err)
	}
	// For 200 days every failure on a node is followed two days later by
	// another on the same node; racks 0..19 fail, racks 20..39 never do.
	now := int64(0)
	for d := 0; d < 200; d += 10 {
		r := (d / 10) % 20
		node := fmt.Sprintf("r%d-n%d", r, d%5)
		for _, at := range []int64{int64(d) * dayS, int64(d+2) * dayS} {
			if err := m.Observe(node, at); err != nil {
				t.Fatal(err)
			}
		}
		now = int64(d+3) * dayS
	}
	m.Advance(now)
	base := m.BaseRate()
	if base <= 0 || base > 0.05 {
		t.Errorf("base rate %v, want small and positive", base)
	}
	// A node that just failed is far riskier than one that never did,
	// and a node of a never-failed rack is at the base rate.
	if err := m.Observe("r3-n1", now); err != nil {
		t.Fatal(err)
	}
	// A day later (the table samples daily, so it knows days, not hours).
	at := now + dayS + 3600
	m.Advance(at)
	hot, _ := m.Risk("r3-n1", at)
	cold, _ := m.Risk("r30-n1", at)
	sibling, _ := m.Risk("r3-n2", at)
	if !(hot > 10*base) {
		t.Errorf("a node that just failed: risk %v, base %v", hot, base)
	}
	if cold > 2*base+1e-9 {
		t.Errorf("a node whose rack never failed: risk %v, base %v", cold, base)
	}
	if !(sibling > cold) {
		t.Errorf("a rack sibling of a failed node: risk %v, a stranger %v", sibling, cold)
	}
	// Risks matches Risk for every node.
	all := m.Risks(at, nil)
	for i, p := range fleetPlaces(40, 5) {
		r, _ := m.Risk(p.Node, at)
		if d := all[i] - r; d > 1e-12 || d < -1e-12 {
			t.Fatalf("Risks[%d] = %v, Risk(%s) = %v", i, all[i], p.Node, r)
		}
	}
	// Its table has learned the follow-ups it saw, from resolved samples
	// only.
	if hz := m.Hazards(LevelNode); len(hz) == 0 {
		t.Error("no node hazards learned")
	}
}

func TestCorrelatedRefusesBadInput(t *testing.T) {
	if _, err := NewCorrelated(DefaultCorrelated, []Place{{Node: "a"}, {Node: "a"}}); err == nil {
		t.Error("a node listed twice was accepted")
	}
	if _, err := NewCorrelated(CorrelatedConfig{}, nil); err == nil {
		t.Error("a zero window was accepted")
	}
	m, _ := NewCorrelated(DefaultCorrelated, fleetPlaces(1, 2))
	if err := m.Observe("nobody", 0); !errors.Is(err, ErrUnknownNode) {
		t.Errorf("unknown node: %v", err)
	}
	if _, err := m.Risk("nobody", 0); !errors.Is(err, ErrUnknownNode) {
		t.Errorf("risk of an unknown node: %v", err)
	}
	_ = m.Observe("r0-n0", 100)
	if err := m.Observe("r0-n1", 50); !errors.Is(err, ErrOutOfOrder) {
		t.Errorf("a failure before the last: %v", err)
	}
}

// TestCorrelatedLearnsOnlyWhatHasHappened: a follow-up failure enters
// the table only once the window of the sample it follows has passed.
func TestCorrelatedLearnsOnlyWhatHasHappened(t *testing.T) {
	const dayS = 86400
	m, _ := NewCorrelated(DefaultCorrelated, fleetPlaces(2, 2))
	_ = m.Observe("r0-n0", 0)
	_ = m.Observe("r0-n0", 2*dayS)
	m.Advance(7 * dayS)
	if hz := m.Hazards(LevelNode); len(hz) != 0 {
		t.Fatalf("at day 7 no sample's week has passed, yet the table holds %+v", hz)
	}
	m.Advance(9 * dayS)
	hz := m.Hazards(LevelNode)
	if len(hz) == 0 {
		t.Fatal("at day 9 the day-1 sample's week has passed: nothing learned")
	}
	followed := 0.0
	for _, h := range hz {
		followed += h.Rate * float64(h.Samples)
	}
	if followed != 1 {
		t.Errorf("one sample (day 1) was followed by a failure (day 2); the table counts %v: %+v", followed, hz)
	}
}
