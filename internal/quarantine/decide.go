package quarantine

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/strata-dev/strata/internal/stats"
)

// Alloc is one allocation as the decision weighs it.
type Alloc struct {
	// Workload names the allocation's workload (namespace and name): the
	// failures of one workload alone never quarantine a node.
	Workload string
	// Ended is when the allocation reached a terminal client status; zero
	// while it is pending or running.
	Ended time.Time
	// Failed: it ended failed by its own tasks' doing (not lost with its
	// node, not fenced by its agent, not stopped by the server).
	Failed bool
}

// Node is one node of the cell as the decision reads it.
type Node struct {
	ID   string
	Name string
	// Quarantined: the node is quarantined already (by an operator or by
	// this package); it is not judged again.
	Quarantined bool
	// Auto: quarantined automatically; it counts against the cap.
	Auto bool
	// Lifted is when an operator last lifted its quarantine: evidence from
	// before it is not weighed again.
	Lifted time.Time
	// Downs are the times the server marked the node down.
	Downs []time.Time
	// Allocs are the node's allocations the state still holds.
	Allocs []Alloc
}

// Kind is what a verdict found.
type Kind string

const (
	// Failing: the node's allocations fail far more often than the
	// rest of the cell's.
	Failing Kind = "failing"
	// Flapping: the node was marked down MaxDowns times in FlapWindow.
	Flapping Kind = "flapping"
)

// Verdict is one node to quarantine, with the evidence.
type Verdict struct {
	NodeID string
	Name   string
	Kind   Kind
	// Failing: the node's failures and samples (allocations that ran in
	// the window) and how many workloads failed; the rest of the cell's
	// failures and samples, its rate, and the thresholds the node passed.
	Failures, Samples, Workloads int
	CellFailures, CellSamples    int
	CellRate                     float64
	PValue, Threshold            float64
	// Flapping: how many times the node went down in the flap window.
	Downs int
	// Reason is the evidence in words, for the quarantine and its event.
	Reason string
}

// strength orders verdicts when the cap admits only some: the smallest
// p-value first, flaps (p-value 0 by convention) by their count.
func (v Verdict) strength() float64 {
	if v.Kind == Flapping {
		return -float64(v.Downs)
	}
	return v.PValue
}

// Decision is what one check decided.
type Decision struct {
	// Quarantine lists the nodes to quarantine now, strongest evidence first.
	Quarantine []Verdict
	// HeldBack lists nodes whose evidence sufficed but whom the cap held
	// back.
	HeldBack []Verdict
	// Cap is how many nodes may be quarantined automatically at once;
	// Auto how many are.
	Cap, Auto int
	// CellWideFlapping counts the nodes that flapped when more than
	// MaxFraction of the cell did (none is quarantined for it); 0 otherwise.
	CellWideFlapping int
}

// tally is one node's evidence in the failure window.
type tally struct {
	failures, samples int
	workloads         map[string]bool
}

// Decide judges every node of the cell at now under p. It is a pure
// function: the same nodes, policy and time give the same decision.
func Decide(nodes []Node, p Policy, now time.Time) Decision {
	p = p.WithDefaults()
	var dec Decision
	if p.Off || len(nodes) < p.MinNodes {
		return dec
	}
	for _, n := range nodes {
		if n.Auto {
			dec.Auto++
		}
	}
	dec.Cap = max(1, int(math.Floor(p.MaxFraction*float64(len(nodes)))))

	tallies := make([]tally, len(nodes))
	cellFailures, cellSamples, tested := 0, 0, 0
	for i, n := range nodes {
		tallies[i] = tallyOf(n, since(now, p.Window, n.Lifted))
		cellFailures += tallies[i].failures
		cellSamples += tallies[i].samples
		if tallies[i].samples > 0 {
			tested++
		}
	}

	var found, flaps []Verdict
	for i, n := range nodes {
		if n.Quarantined {
			continue
		}
		if v, ok := failing(n, tallies[i], cellFailures, cellSamples, tested, p); ok {
			found = append(found, v)
			continue
		}
		if downs := downsSince(n.Downs, since(now, p.FlapWindow, n.Lifted), now); downs >= p.MaxDowns {
			flaps = append(flaps, Verdict{NodeID: n.ID, Name: n.Name, Kind: Flapping, Downs: downs,
				Reason: fmt.Sprintf("heartbeats flap: marked down %d times in the last %s (threshold %d)", downs, p.FlapWindow, p.MaxDowns)})
		}
	}
	if float64(len(flaps)) > p.MaxFraction*float64(len(nodes)) {
		dec.CellWideFlapping = len(flaps) // the cell's fault, not theirs
	} else {
		found = append(found, flaps...)
	}
	sort.SliceStable(found, func(i, j int) bool {
		if a, b := found[i].strength(), found[j].strength(); a != b {
			return a < b
		}
		return found[i].NodeID < found[j].NodeID
	})
	room := max(0, dec.Cap-dec.Auto)
	if room > len(found) {
		room = len(found)
	}
	dec.Quarantine, dec.HeldBack = found[:room], found[room:]
	return dec
}

// since is where a window of length w ending at now starts, no earlier
// than an operator's lift.
func since(now time.Time, w time.Duration, lifted time.Time) time.Time {
	start := now.Add(-w)
	if lifted.After(start) {
		return lifted
	}
	return start
}

// tallyOf counts node n's samples and failures since start: an allocation
// is a sample when it still runs or ended at or after start, and a failure
// when it also ended failed then.
func tallyOf(n Node, start time.Time) tally {
	t := tally{workloads: map[string]bool{}}
	for _, a := range n.Allocs {
		if !a.Ended.IsZero() && a.Ended.Before(start) {
			continue
		}
		t.samples++
		if a.Failed && !a.Ended.IsZero() {
			t.failures++
			t.workloads[a.Workload] = true
		}
	}
	return t
}

func downsSince(downs []time.Time, start, now time.Time) int {
	n := 0
	for _, d := range downs {
		if !d.Before(start) && !d.After(now) {
			n++
		}
	}
	return n
}

// failing tests node n's failures against the rest of the cell's. The
// reference rate leaves the node out (so a bad node does not raise the bar
// it is judged by) and adds one failure and two samples (Laplace's rule),
// so a cell with no other failures still has a rate above zero and a cell
// with few samples a high one.
func failing(n Node, t tally, cellFailures, cellSamples, tested int, p Policy) (Verdict, bool) {
	if t.failures < p.MinFailures || len(t.workloads) < p.MinWorkloads {
		return Verdict{}, false
	}
	otherF, otherS := cellFailures-t.failures, cellSamples-t.samples
	rate := float64(otherF+1) / float64(otherS+2)
	nodeRate := float64(t.failures) / float64(t.samples)
	if nodeRate < p.MinRatio*rate {
		return Verdict{}, false
	}
	threshold := p.Alpha / float64(max(1, tested))
	pv := stats.BinomialTail(t.samples, t.failures, rate)
	if pv > threshold {
		return Verdict{}, false
	}
	v := Verdict{NodeID: n.ID, Name: n.Name, Kind: Failing, Failures: t.failures, Samples: t.samples, Workloads: len(t.workloads),
		CellFailures: otherF, CellSamples: otherS, CellRate: rate, PValue: pv, Threshold: threshold}
	v.Reason = fmt.Sprintf("allocations fail far more often than the cell's: %d of %d failed in the last %s (%.1f%%, %d workloads); "+
		"the other nodes %d of %d (rate %.2f%%); thresholds: at least %d failures from %d workloads, %gx the cell's rate, "+
		"binomial p ≤ %.2g (alpha %g over %d nodes); p = %.2g",
		t.failures, t.samples, p.Window, 100*nodeRate, len(t.workloads), otherF, otherS, 100*rate,
		p.MinFailures, p.MinWorkloads, p.MinRatio, threshold, p.Alpha, max(1, tested), pv)
	return v, true
}
