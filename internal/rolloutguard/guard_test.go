package rolloutguard

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/internal/incident"
)

var t0 = time.Date(2025, 1, 5, 12, 0, 0, 0, time.UTC)

func sec(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }

// rollout is a guard with a builder's conveniences: nodes n1..n12, of
// class gen4 (n1-n4), gen5 (n5-n8) and gen6 (n9-n12).
type rollout struct {
	t *testing.T
	g *Guard
}

func newRollout(t *testing.T, b Baseline) *rollout {
	return &rollout{t: t, g: New(Deployment{ID: "d1", Version: 2, FromVersion: 1, Baseline: b, Classes: 3}, Policy{})}
}

// goodBaseline: 200 starts, 2 failed; 20 events in 100 copy-hours.
var goodBaseline = Baseline{Starts: 200, FailedStarts: 2, Events: 20, Exposure: 100 * time.Hour}

func nodeClass(node int) Class {
	return Class{"class", fmt.Sprintf("gen%d", 4+(node-1)/4)}
}

func (r *rollout) start(at int, id string, isNew bool, node int) {
	r.g.Start(sec(at), Alloc{ID: id, New: isNew, Node: fmt.Sprintf("n%d", node), Classes: []Class{nodeClass(node)}})
}

func (r *rollout) trouble(at int, id string, k incident.Kind) {
	r.g.Trouble(Trouble{At: sec(at), AllocID: id, Kind: k, Ref: id + "@" + fmt.Sprint(at)})
}

func TestGuardCrashOnStart(t *testing.T) {
	r := newRollout(t, goodBaseline)
	for i := 1; i <= 4; i++ {
		id := fmt.Sprintf("new%d", i)
		r.start(10*i, id, true, i*3)
		r.trouble(10*i+5, id, incident.Restarted)
	}
	v := r.g.Judge(sec(200), nil)
	if !v.Halt || v.Test != TestStarts {
		t.Fatalf("verdict %+v, want a halt on failed starts", v)
	}
	if !strings.Contains(v.Reason, "version 2 fails to start") || !strings.Contains(v.Reason, "failed within 1m0s") {
		t.Fatalf("reason %q", v.Reason)
	}
	if again := r.g.Judge(sec(300), nil); again != v {
		t.Fatal("a verdict is not sticky")
	}
}

// TestGuardOneNodeIsNotTheVersion: copies crashing on one node are the
// node's trouble, however many.
func TestGuardOneNodeIsNotTheVersion(t *testing.T) {
	r := newRollout(t, goodBaseline)
	for i := 1; i <= 8; i++ {
		id := fmt.Sprintf("new%d", i)
		r.start(10*i, id, true, 1)
		r.trouble(10*i+5, id, incident.Failed)
	}
	if v := r.g.Judge(sec(600), nil); v.Halt {
		t.Fatalf("halted on one node's failures: %s", v.Reason)
	}
}

// TestGuardExplainedTroubleIsNotBlamed: trouble the cell explains (an
// infrastructure incident) never counts against the version, and a
// verdict waits Settle for the explanation.
func TestGuardExplainedTroubleIsNotBlamed(t *testing.T) {
	for _, explainIt := range []bool{true, false} {
		r := newRollout(t, goodBaseline)
		for i := 1; i <= 4; i++ {
			id := fmt.Sprintf("new%d", i)
			r.start(0, id, true, i*3)
			r.trouble(5, id, incident.Failed)
		}
		explain := func(Trouble) bool { return explainIt }
		if v := r.g.Judge(sec(34), explain); v.Halt {
			t.Fatalf("halted before the trouble settled: %s", v.Reason)
		}
		v := r.g.Judge(sec(35), explain)
		if v.Halt == explainIt {
			t.Fatalf("explained %v: verdict %+v", explainIt, v)
		}
		if st := r.g.Status(); explainIt && st.Explained != 4 {
			t.Fatalf("status %+v, want 4 explained", st)
		}
	}
}

// TestGuardBesideTheOld: mature copies of both versions; the new one
// takes far more than its half of the events.
func TestGuardBesideTheOld(t *testing.T) {
	r := newRollout(t, Baseline{}) // no history: only the test beside can judge
	for i := 1; i <= 10; i++ {
		r.start(0, fmt.Sprintf("old%d", i), false, i)
		r.start(0, fmt.Sprintf("new%d", i), true, i)
	}
	// 30 events on the new copies, 3 on the old, while each version is
	// half of the running copies.
	at := 120
	for k := range 30 {
		r.trouble(at, fmt.Sprintf("new%d", k%10+1), incident.OOMKilled)
		at += 30
		if k%10 == 9 {
			r.trouble(at, fmt.Sprintf("old%d", k/10+1), incident.OOMKilled)
		}
	}
	v := r.g.Judge(sec(at+60), nil)
	if !v.Halt || v.Test != TestBeside {
		t.Fatalf("verdict %+v, want a halt beside the old version", v)
	}
	if !strings.Contains(v.Reason, "more often than version 1 beside it") {
		t.Fatalf("reason %q", v.Reason)
	}
}

// TestGuardOneClassOfNodes: a version that fails only on gen4 nodes is
// found on them, and the verdict names the class.
func TestGuardOneClassOfNodes(t *testing.T) {
	r := newRollout(t, goodBaseline)
	at := 0
	for round := range 3 {
		for node := 1; node <= 12; node++ {
			id := fmt.Sprintf("new%d-%d", round, node)
			r.start(at, id, true, node)
			if nodeClass(node).Value == "gen4" {
				r.trouble(at+10, id, incident.Failed)
				r.g.Stop(sec(at+10), id)
			}
			at += 70
		}
	}
	v := r.g.Judge(sec(at+100), nil)
	if !v.Halt || v.Class != (Class{"class", "gen4"}) {
		t.Fatalf("verdict %+v, want a halt on class=gen4", v)
	}
	if !strings.Contains(v.Reason, "on nodes with class=gen4") {
		t.Fatalf("reason %q", v.Reason)
	}
}

// TestGuardAgainstThePast: no old copy is left, and the new version's
// copies are in trouble ten times as often as the old version was.
func TestGuardAgainstThePast(t *testing.T) {
	r := newRollout(t, goodBaseline) // 0.2 events per copy-hour
	for i := 1; i <= 10; i++ {
		r.start(0, fmt.Sprintf("new%d", i), true, i)
	}
	// 2 events per copy-hour for an hour: 20 events.
	for k := range 20 {
		r.trouble(180*k+100, fmt.Sprintf("new%d", k%10+1), incident.Restarted)
	}
	v := r.g.Judge(sec(3700), nil)
	if !v.Halt || v.Test != TestHistory {
		t.Fatalf("verdict %+v, want a halt against the past", v)
	}
}

// TestGuardGoodVersionPasses: a version that fails as often as its
// baseline is not halted.
func TestGuardGoodVersionPasses(t *testing.T) {
	r := newRollout(t, goodBaseline)
	for i := 1; i <= 100; i++ {
		id := fmt.Sprintf("new%d", i)
		r.start(20*i, id, true, i%12+1)
		if i == 50 {
			r.trouble(20*i+3, id, incident.Failed) // 1 %, as before
		}
	}
	for k := range 4 { // 0.2 per copy-hour over about 20 copy-hours
		r.trouble(600*k+900, fmt.Sprintf("new%d", 10*k+5), incident.Restarted)
	}
	if v := r.g.Judge(sec(3000), nil); v.Halt {
		t.Fatalf("halted a good version: %s", v.Reason)
	}
}
