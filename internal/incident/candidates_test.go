package incident

import (
	"fmt"
	"math"
	"testing"
	"time"
)

// cellBuilder builds a census of racks × nodes × allocations per node and
// signals about its units.
type cellBuilder struct {
	census *Census
	racks  int
}

func newCell(racks, nodes, allocs int) *cellBuilder {
	c := &cellBuilder{census: NewCensus(), racks: racks}
	for r := 1; r <= racks; r++ {
		for n := 1; n <= nodes; n++ {
			c.census.Add(UnitNode, c.nodeAttrs(r, n)...)
			for a := 1; a <= allocs; a++ {
				c.census.Add(UnitAlloc, c.allocAttrs(r, n, a)...)
			}
		}
	}
	return c
}

func (c *cellBuilder) nodeAttrs(r, n int) []Attr {
	return []Attr{{KeyNode, fmt.Sprintf("r%d-n%d", r, n)}, {KeyRack, fmt.Sprintf("r%d", r)}, {KeyPowerZone, fmt.Sprintf("pz%d", (r-1)/4+1)}}
}

func (c *cellBuilder) allocAttrs(r, n, a int) []Attr {
	w := fmt.Sprintf("w%d", a)
	return append(c.nodeAttrs(r, n), Attr{KeyWorkload, w}, Attr{KeyVersion, w + "@v1"})
}

// failed is a failure of allocation a on node n of rack r.
func (c *cellBuilder) failed(r, n, a int) Signal {
	return Signal{Time: day(12, 0, 0), Kind: Failed, Subject: fmt.Sprintf("r%d-n%d-a%d", r, n, a), Attrs: c.allocAttrs(r, n, a)}
}

func TestCandidates(t *testing.T) {
	cell := newCell(20, 5, 10) // 100 nodes, 1000 allocations, pz of 4 racks
	tests := []struct {
		name    string
		signals func() []Signal
		want    string // the best admissible cause, "" for none
	}{
		{"one node's failures are the node's, not its rack's", func() []Signal {
			var s []Signal
			for a := 1; a <= 5; a++ {
				s = append(s, cell.failed(3, 2, a))
			}
			return s
		}, "node r3-n2"},
		{"failures across a rack's nodes are the rack's", func() []Signal {
			var s []Signal
			for n := 1; n <= 5; n++ {
				s = append(s, cell.failed(7, n, n), cell.failed(7, n, n+5))
			}
			return s
		}, "rack r7"},
		{"one workload's failures across racks are its version's", func() []Signal {
			var s []Signal
			for r := 1; r <= 8; r++ {
				s = append(s, cell.failed(r, r%5+1, 4))
			}
			return s
		}, "version w4@v1"},
		{"two failures are too few", func() []Signal {
			return []Signal{cell.failed(3, 2, 1), cell.failed(3, 2, 2)}
		}, ""},
		{"a rack's three failures on one node are the node's", func() []Signal {
			return []Signal{cell.failed(9, 1, 1), cell.failed(9, 1, 2), cell.failed(9, 1, 3)}
		}, "node r9-n1"},
		{"failures spread over the cell share nothing", func() []Signal {
			var s []Signal
			for r := 1; r <= 20; r++ {
				s = append(s, cell.failed(r, (r*3)%5+1, (r*7)%10+1))
			}
			return s
		}, ""},
	}
	p := Policy{}.WithDefaults()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ""
			for _, c := range candidates(tt.signals(), cell.census, p) {
				if c.admissible(p) {
					got = c.String()
					break
				}
			}
			if got != tt.want {
				t.Fatalf("best cause %q, want %q", got, tt.want)
			}
		})
	}
}

// TestCandidatesHalfTheCellIsNoCause: a value that holds most of the
// cell explains nothing, however many of the troubled share it.
func TestCandidatesHalfTheCellIsNoCause(t *testing.T) {
	census := NewCensus()
	var sigs []Signal
	for i := range 100 {
		attrs := []Attr{{KeyNode, fmt.Sprintf("n%d", i)}, {KeyDriver, "exec"}}
		if i%10 == 0 {
			attrs[1].Value = "containerd"
		}
		census.Add(UnitAlloc, attrs...)
		if i < 40 && i%10 != 0 {
			sigs = append(sigs, Signal{Time: day(12, 0, 0), Kind: Failed, Subject: fmt.Sprint(i), Attrs: attrs})
		}
	}
	p := Policy{}.WithDefaults()
	for _, c := range candidates(sigs, census, p) {
		if c.admissible(p) {
			t.Fatalf("admitted %s (%s): driver exec holds 90 %% of the cell", c, c.Evidence())
		}
	}
}

// TestCensusMissesAValue: a value the census never counted is judged by
// what the troubled prove exists, not as infinitely unlikely.
func TestCensusMissesAValue(t *testing.T) {
	census := NewCensus()
	for i := range 1000 {
		census.Add(UnitAlloc, Attr{KeyNode, fmt.Sprintf("n%d", i%100)})
	}
	sig := Signal{Time: day(12, 0, 0), Kind: Failed, Subject: "x", Attrs: []Attr{{KeyNode, "n-unknown"}}}
	cs := candidates([]Signal{sig}, census, Policy{}.WithDefaults())
	if len(cs) != 1 || math.IsInf(cs[0].LogP, -1) || cs[0].LogP > 0 {
		t.Fatalf("candidates %+v: want one finite log p-value", cs)
	}
}

func TestFormatLogP(t *testing.T) {
	tests := []struct {
		logP float64
		want string
	}{
		{math.Log(0.5), "0.5"},
		{math.Log(0.012), "0.012"},
		{math.Log(3.14e-19), "3.1e-19"},
		{-1000 * math.Ln10, "1.0e-1000"},
		{math.Inf(-1), "0"},
	}
	for _, tt := range tests {
		if got := formatLogP(tt.logP); got != tt.want {
			t.Errorf("formatLogP(%g) = %q, want %q", tt.logP, got, tt.want)
		}
	}
}

func TestObserveRefusesBadSignals(t *testing.T) {
	e := New(Policy{})
	for _, s := range []Signal{
		{Time: day(12, 0, 0), Kind: "exploded", Subject: "a"},
		{Time: day(12, 0, 0), Kind: Failed},
		{Kind: Failed, Subject: "a"},
	} {
		if _, err := e.Observe(s); err == nil {
			t.Errorf("Observe(%+v) accepted a bad signal", s)
		}
	}
	if e.Pending() != 0 {
		t.Fatalf("%d bad signals kept", e.Pending())
	}
}

// TestWindowAndQuiet: an incident closes Quiet after its last signal, and
// a lone signal is dropped Window after it came.
func TestWindowAndQuiet(t *testing.T) {
	cell := newCell(10, 5, 10)
	e := New(Policy{Window: time.Minute, Quiet: 2 * time.Minute})
	e.SetCensus(cell.census)
	for a := 1; a <= 4; a++ {
		mustObserve(t, e, cell.failed(2, 2, a))
	}
	mustObserve(t, e, cell.failed(5, 1, 1))
	if cs := e.Step(day(12, 0, 5)); len(cs) != 1 || cs[0].Kind != Opened {
		t.Fatalf("changes %+v, want one opened", cs)
	}
	if e.Pending() != 1 {
		t.Fatalf("pending %d, want the lone failure", e.Pending())
	}
	e.Step(day(12, 1, 1))
	if e.Pending() != 0 || e.Dropped() != 1 {
		t.Fatalf("pending %d dropped %d after the window, want 0 and 1", e.Pending(), e.Dropped())
	}
	if cs := e.Step(day(12, 1, 59)); len(cs) != 0 {
		t.Fatalf("closed before Quiet: %+v", cs)
	}
	if cs := e.Step(day(12, 2, 0)); len(cs) != 1 || cs[0].Kind != Closed {
		t.Fatalf("changes %+v at Quiet, want one closed", cs)
	}
}

func mustObserve(t *testing.T, e *Engine, s Signal) string {
	t.Helper()
	id, err := e.Observe(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}
