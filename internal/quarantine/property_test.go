package quarantine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// atRate builds a node with samples allocations of which the rounded share
// rate failed a minute ago, spread over three workloads.
func atRate(id string, samples int, rate float64) Node {
	failures := int(math.Round(rate * float64(samples)))
	return node(id).running(samples-failures, "web").failed(failures, time.Minute, "web", "db", "cache").n
}

// TestPropertyNodeAtCellRateNeverQuarantined: in a cell whose nodes all
// fail at one rate, however busy each node is, no node is quarantined for
// failing: the effect size alone rules it out, whatever the samples say.
func TestPropertyNodeAtCellRateNeverQuarantined(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		rate := rapid.Float64Range(0, 0.3).Draw(rt, "rate")
		count := rapid.IntRange(3, 40).Draw(rt, "nodes")
		var nodes []Node
		for i := range count {
			nodes = append(nodes, atRate(fmt.Sprint("n", i), rapid.IntRange(1, 300).Draw(rt, "samples"), rate))
		}
		dec := Decide(nodes, Policy{}, now)
		if len(dec.Quarantine)+len(dec.HeldBack) > 0 {
			rt.Fatalf("quarantined %s (held %s) in a cell failing at %g everywhere", ids(dec.Quarantine), ids(dec.HeldBack), rate)
		}
	})
}

// TestPropertyNodeAtTenTimesQuarantined: a node failing at ten times the
// rest of the cell's rate is quarantined once it has enough samples (ten
// failures expected) and the cell enough to know its rate (ten failures
// among the other nodes). The cell's rate is what its nodes show: their
// failures, spread over them, over their samples.
func TestPropertyNodeAtTenTimesQuarantined(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		rate := rapid.Float64Range(0.002, 0.05).Draw(rt, "rate")
		count := rapid.IntRange(3, 40).Draw(rt, "nodes")
		perNode := int(math.Ceil(10 / rate / float64(count-1)))
		samples := make([]int, count-1)
		total := 0
		for i := range samples {
			samples[i] = perNode + rapid.IntRange(0, 50).Draw(rt, "extra")
			total += samples[i]
		}
		cellFailures := int(math.Round(rate * float64(total)))
		failures := make([]int, count-1)
		for i := range cellFailures {
			failures[i%len(failures)]++
		}
		var nodes []Node
		for i := range samples {
			nodes = append(nodes, node(fmt.Sprint("n", i)).running(samples[i]-failures[i], "web").failed(failures[i], time.Minute, "web", "db").n)
		}
		cellRate := float64(cellFailures) / float64(total)
		bad := int(math.Ceil(1/cellRate)) + rapid.IntRange(0, 200).Draw(rt, "bad extra")
		nodes = append(nodes, atRate("bad", bad, 10*cellRate))
		dec := Decide(nodes, Policy{}, now)
		if ids(dec.Quarantine) != "bad:failing" {
			rt.Fatalf("quarantined %q, want bad (cell rate %g, %d samples; held %s)", ids(dec.Quarantine), cellRate, bad, ids(dec.HeldBack))
		}
	})
}

// TestPropertyDecisionBoundedAndDeterministic: over random cells, the
// nodes quarantined automatically never exceed the cap, a node already
// quarantined is never chosen, and the decision does not depend on the
// order the nodes are read in.
func TestPropertyDecisionBoundedAndDeterministic(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		count := rapid.IntRange(0, 30).Draw(rt, "nodes")
		var nodes []Node
		for i := range count {
			b := node(fmt.Sprint("n", i)).running(rapid.IntRange(0, 30).Draw(rt, "running"), "web")
			if f := rapid.IntRange(0, 15).Draw(rt, "failed"); f > 0 {
				b.failed(f, time.Duration(rapid.IntRange(0, 60).Draw(rt, "ago"))*time.Minute, "web", "db")
			}
			for range rapid.IntRange(0, 4).Draw(rt, "downs") {
				b.downs(time.Duration(rapid.IntRange(0, 90).Draw(rt, "down ago")) * time.Minute)
			}
			if rapid.IntRange(0, 9).Draw(rt, "quarantined") == 0 {
				b.quarantined(rapid.Bool().Draw(rt, "auto"))
			}
			nodes = append(nodes, b.n)
		}
		dec := Decide(nodes, Policy{}, now)
		if dec.Auto <= dec.Cap && dec.Auto+len(dec.Quarantine) > dec.Cap {
			rt.Fatalf("%d automatic + %d new > cap %d", dec.Auto, len(dec.Quarantine), dec.Cap)
		}
		byID := map[string]Node{}
		for _, n := range nodes {
			byID[n.ID] = n
		}
		for _, v := range append(dec.Quarantine, dec.HeldBack...) {
			if byID[v.NodeID].Quarantined {
				rt.Fatalf("node %s chosen while quarantined", v.NodeID)
			}
		}
		shuffled := append([]Node(nil), nodes...)
		r := rand.New(rand.NewPCG(uint64(count), 7))
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		again := Decide(shuffled, Policy{}, now)
		if ids(again.Quarantine) != ids(dec.Quarantine) || ids(again.HeldBack) != ids(dec.HeldBack) {
			rt.Fatalf("order changed the decision: %s / %s, then %s / %s", ids(dec.Quarantine), ids(dec.HeldBack), ids(again.Quarantine), ids(again.HeldBack))
		}
	})
}
