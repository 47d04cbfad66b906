package faults

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/test/history"
)

// soak reports whether the long versions run (STRATA_SOAK=1): each
// scenario repeats its fault until at least soakOps operations were
// recorded.
func soak() bool { return os.Getenv("STRATA_SOAK") == "1" }

const soakOps = 10_000

// scenario is one fault scenario: a cell, a load, and a fault injected
// round after round.
type scenario struct {
	cell Options
	load LoadOptions
	// shortRounds faults are injected in the CI version; the soak injects
	// at least soakRounds and goes on until soakOps operations.
	shortRounds, soakRounds int
	// between is how many operations the load does between two faults
	// (short version; the soak does three times as many).
	between int64
	// inject injects one fault, heals it, checks what the scenario
	// promises, and records the times it measured (run.measure).
	inject func(r *run, round int)
	// setup, when set, runs once the cell is up, before the load starts;
	// teardown after the history was checked.
	setup, teardown func(r *run)
}

// run is a scenario in progress.
type run struct {
	t      *testing.T
	c      *Cell
	l      *Load
	faults int
	// times holds measured durations by what they measure ("write
	// failover", "election", ...), in the order first measured.
	times  map[string][]time.Duration
	labels []string
}

// measure records one duration of what label names.
func (r *run) measure(label string, d time.Duration) {
	if r.times == nil {
		r.times = map[string][]time.Duration{}
	}
	if _, ok := r.times[label]; !ok {
		r.labels = append(r.labels, label)
	}
	r.times[label] = append(r.times[label], d)
}

// timings renders every measured duration's percentiles.
func (r *run) timings() string {
	var parts []string
	for _, l := range r.labels {
		parts = append(parts, l+": "+percentiles(r.times[l]))
	}
	if len(parts) == 0 {
		return "nothing timed"
	}
	return strings.Join(parts, "; ")
}

// runScenario runs sc and checks its history.
func runScenario(t *testing.T, sc scenario) {
	c := StartCell(t, strataBin, sc.cell)
	r := &run{t: t, c: c}
	if sc.setup != nil {
		sc.setup(r)
	}
	client := c.Client(ClientOptions{Attempt: 6 * time.Second, RetryFor: 10 * time.Second})
	l := StartLoad(client, sc.load)
	r.l = l
	defer func() {
		if t.Failed() {
			l.Stop()
			t.Logf("process logs:\n%s", c.Logs(40))
		}
	}()
	between := sc.between
	if soak() {
		between *= 3
	}
	start := time.Now()
	for round := 0; ; round++ {
		if soak() && round >= sc.soakRounds && l.Ops() >= soakOps || !soak() && round >= sc.shortRounds {
			break
		}
		if err := l.WaitOps(l.Ops()+between, 2*time.Minute); err != nil {
			t.Fatalf("round %d: the load stalled before the fault: %v", round+1, err)
		}
		sc.inject(r, round)
		r.faults++
	}
	// A last stretch without faults: the healed cell must take the load.
	if err := l.WaitOps(l.Ops()+between, 2*time.Minute); err != nil {
		t.Fatalf("the load stalled after the last fault: %v", err)
	}
	l.Stop()
	elapsed := time.Since(start)
	c.WaitHealthy(60 * time.Second)
	if err := l.FinalReads(c.Client(ClientOptions{Attempt: 5 * time.Second, RetryFor: 10 * time.Second}), time.Minute); err != nil {
		t.Fatal(err)
	}
	if bad := l.Unexpected(); len(bad) > 0 {
		t.Errorf("%d answers no fault explains, e.g. %s", len(bad), bad[0])
	}
	rep, err := history.Check(l.History(), history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", rep.Summary())
	t.Logf("%d faults in %v; %s; outcomes: %s", r.faults, elapsed.Round(time.Second), r.timings(), l.Outcomes())
	writeReport(t, rep, r, elapsed)
	if err := rep.Err(); err != nil {
		t.Fatal(err)
	}
	if sc.teardown != nil {
		sc.teardown(r)
	}
}

// percentiles renders p50/p99/max of failover times.
func percentiles(ds []time.Duration) string {
	if len(ds) == 0 {
		return "not measured"
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	p := func(q float64) time.Duration { return s[min(len(s)-1, int(q*float64(len(s))))].Round(time.Millisecond) }
	return fmt.Sprintf("p50 %v, p99 %v, max %v over %d", p(0.50), p(0.99), s[len(s)-1].Round(time.Millisecond), len(s))
}

// writeReport appends the scenario's figures as one JSON line to
// $STRATA_FAULTS_REPORT, when set (docs/reliability.md is written from it).
func writeReport(t *testing.T, rep *history.Report, r *run, elapsed time.Duration) {
	path := os.Getenv("STRATA_FAULTS_REPORT")
	if path == "" {
		return
	}
	line, _ := json.Marshal(map[string]any{
		"scenario": t.Name(), "soak": soak(), "ops": rep.Ops, "byKind": rep.ByKind, "acknowledged": rep.Acknowledged,
		"indeterminate": rep.Indeterminate, "keys": rep.Keys, "faults": r.faults, "times": r.timings(),
		"outcomes": r.l.Outcomes(), "verdict": strings.TrimSpace(rep.Summary()), "elapsed": elapsed.Round(time.Second).String(),
		"date": time.Now().UTC().Format(time.RFC3339),
	})
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Errorf("report: %v", err)
		return
	}
	defer f.Close()
	f.Write(append(line, '\n'))
}
