package quarantine

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

var now = time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)

// nodeBuilder builds a Node with allocations and downs.
type nodeBuilder struct{ n Node }

func node(id string) *nodeBuilder { return &nodeBuilder{n: Node{ID: id, Name: id}} }

// running adds count allocations of workload that still run.
func (b *nodeBuilder) running(count int, workload string) *nodeBuilder {
	for range count {
		b.n.Allocs = append(b.n.Allocs, Alloc{Workload: workload})
	}
	return b
}

// failed adds count allocations that failed ago, spread over workloads.
func (b *nodeBuilder) failed(count int, ago time.Duration, workloads ...string) *nodeBuilder {
	for i := range count {
		b.n.Allocs = append(b.n.Allocs, Alloc{Workload: workloads[i%len(workloads)], Ended: now.Add(-ago), Failed: true})
	}
	return b
}

func (b *nodeBuilder) downs(ago ...time.Duration) *nodeBuilder {
	for _, a := range ago {
		b.n.Downs = append(b.n.Downs, now.Add(-a))
	}
	return b
}

func (b *nodeBuilder) lifted(ago time.Duration) *nodeBuilder { b.n.Lifted = now.Add(-ago); return b }
func (b *nodeBuilder) quarantined(auto bool) *nodeBuilder {
	b.n.Quarantined, b.n.Auto = true, auto
	return b
}

// cell is count healthy nodes h0.. with 20 running allocations each,
// followed by the nodes given.
func cell(count int, extra ...*nodeBuilder) []Node {
	var out []Node
	for i := range count {
		out = append(out, node(fmt.Sprintf("h%02d", i)).running(20, "web").n)
	}
	for _, b := range extra {
		out = append(out, b.n)
	}
	return out
}

func ids(vs []Verdict) string {
	var out []string
	for _, v := range vs {
		out = append(out, v.NodeID+":"+string(v.Kind))
	}
	return strings.Join(out, ",")
}

func TestDecide(t *testing.T) {
	min := time.Minute
	tests := []struct {
		name     string
		nodes    []Node
		policy   Policy
		want     string // quarantined, in order
		held     string
		cellWide int
	}{
		{"one node failing among ten", cell(9, node("bad").running(10, "web").failed(10, 5*min, "web", "db", "cache")), Policy{}, "bad:failing", "", 0},
		{"a single failure never quarantines", cell(9, node("one").failed(1, min, "web")), Policy{}, "", "", 0},
		{"four failures are below the minimum count", cell(9, node("four").failed(4, min, "web", "db")), Policy{}, "", "", 0},
		{"one crash-looping workload is its own fault", cell(9, node("loop").failed(12, min, "web")), Policy{}, "", "", 0},
		{"a cell-wide failure is no node's fault", func() []Node {
			var ns []Node
			for i := range 10 {
				ns = append(ns, node(fmt.Sprint("n", i)).running(10, "web").failed(10, min, "web", "db").n)
			}
			return ns
		}(), Policy{}, "", "", 0},
		{"failures older than the window", cell(9, node("old").running(10, "web").failed(10, 40*min, "web", "db")), Policy{}, "", "", 0},
		{"a longer window sees them", cell(9, node("old").running(10, "web").failed(10, 40*min, "web", "db")), Policy{Window: time.Hour}, "old:failing", "", 0},
		{"failures before an operator's lift are not weighed again", cell(9, node("lifted").running(10, "web").failed(10, 10*min, "web", "db").lifted(5*min)), Policy{}, "", "", 0},
		{"a quarantined node is not judged again", cell(9, node("q").failed(10, min, "web", "db").quarantined(false)), Policy{}, "", "", 0},
		{"a small excess on a busy node is not enough", cell(9, node("busy").running(1000, "web").failed(12, min, "web", "db")), Policy{}, "", "", 0},
		{"three downs in an hour flap", cell(9, node("flap").running(5, "web").downs(50*min, 30*min, 2*min)), Policy{}, "flap:flapping", "", 0},
		{"two downs do not", cell(9, node("twice").downs(30*min, 2*min)), Policy{}, "", "", 0},
		{"downs outside the flap window do not count", cell(9, node("slow").downs(3*time.Hour, 2*time.Hour, 2*min)), Policy{}, "", "", 0},
		{"downs before a lift do not count", cell(9, node("lifted").downs(50*min, 30*min, 2*min).lifted(10*min)), Policy{}, "", "", 0},
		{"many nodes flapping at once is the cell's fault", cell(7,
			node("f1").downs(50*min, 30*min, 2*min), node("f2").downs(50*min, 30*min, 2*min), node("f3").downs(40*min, 20*min, min)),
			Policy{}, "", "", 3},
		{"the cap admits the strongest evidence first", cell(17,
			node("b10").running(10, "web").failed(10, min, "web", "db"),
			node("b12").running(8, "web").failed(12, min, "web", "db"),
			node("b08").running(12, "web").failed(8, min, "web", "db")),
			Policy{}, "b12:failing,b10:failing", "b08:failing", 0},
		{"nodes quarantined automatically count against the cap", cell(8, node("auto").quarantined(true),
			node("bad").running(10, "web").failed(10, min, "web", "db")), Policy{}, "", "bad:failing", 0},
		{"an operator's quarantine does not", cell(8, node("manual").quarantined(false),
			node("bad").running(10, "web").failed(10, min, "web", "db")), Policy{}, "bad:failing", "", 0},
		{"a cell below the minimum size", cell(1, node("bad").failed(10, min, "web", "db")), Policy{}, "", "", 0},
		{"off", cell(9, node("bad").running(10, "web").failed(10, min, "web", "db")), Policy{Off: true}, "", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dec := Decide(tt.nodes, tt.policy, now)
			if got := ids(dec.Quarantine); got != tt.want {
				t.Fatalf("quarantined %q, want %q (held back %q)", got, tt.want, ids(dec.HeldBack))
			}
			if got := ids(dec.HeldBack); got != tt.held {
				t.Fatalf("held back %q, want %q", got, tt.held)
			}
			if dec.CellWideFlapping != tt.cellWide {
				t.Fatalf("cell-wide flapping %d, want %d", dec.CellWideFlapping, tt.cellWide)
			}
		})
	}
}

// TestVerdictEvidence: a verdict carries the numbers an operator needs:
// the node's failures, the cell's rate and the thresholds.
func TestVerdictEvidence(t *testing.T) {
	dec := Decide(cell(9, node("bad").running(10, "web").failed(10, time.Minute, "web", "db", "cache")), Policy{}, now)
	if len(dec.Quarantine) != 1 {
		t.Fatalf("want one verdict, got %d", len(dec.Quarantine))
	}
	v := dec.Quarantine[0]
	if v.Failures != 10 || v.Samples != 20 || v.Workloads != 3 || v.CellFailures != 0 || v.CellSamples != 180 {
		t.Fatalf("evidence %+v", v)
	}
	if want := 1.0 / 182; v.CellRate != want {
		t.Fatalf("cell rate %g, want %g (no failures elsewhere: Laplace's 1 in 180+2)", v.CellRate, want)
	}
	if v.Threshold != DefaultAlpha/10 || v.PValue > v.Threshold {
		t.Fatalf("p %g, threshold %g", v.PValue, v.Threshold)
	}
	for _, want := range []string{"10 of 20 failed", "3 workloads", "0 of 180", "at least 5 failures from 2 workloads", "3x the cell's rate", "alpha 0.001 over 10 nodes"} {
		if !strings.Contains(v.Reason, want) {
			t.Errorf("reason %q does not say %q", v.Reason, want)
		}
	}
}

func TestPolicyValidate(t *testing.T) {
	tests := []struct {
		name  string
		p     Policy
		field string
	}{
		{"defaults", Policy{}, ""},
		{"negative window", Policy{Window: -time.Second}, "window"},
		{"alpha one", Policy{Alpha: 1}, "alpha"},
		{"ratio below one", Policy{MinRatio: 0.5}, "minRatio"},
		{"one down is not a flap", Policy{MaxDowns: 1}, "maxDowns"},
		{"cap above half", Policy{MaxFraction: 0.6}, "maxFraction"},
		{"negative minimum", Policy{MinFailures: -1}, "minFailures"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.p.Validate()
			if tt.field == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), tt.field+":") {
				t.Fatalf("Validate = %v, want an error naming %s", err, tt.field)
			}
		})
	}
}
