package failsim

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/strata-dev/strata/internal/predict"
	"github.com/strata-dev/strata/internal/sim/simtest"
	"github.com/strata-dev/strata/internal/sim/trace"
)

// resultsWanted gates the trace-backed figures of docs/prediction.md:
// minutes of CPU, run with STRATA_SIM_RESULTS=1.
func resultsWanted(t *testing.T) {
	if os.Getenv("STRATA_SIM_RESULTS") == "" || testing.Short() {
		t.Skip("set STRATA_SIM_RESULTS=1 to run the trace-backed figures")
	}
}

// TestFailureModelOnLaterDays is the goal row on the shared days split by
// time: trained on 2013-04-10..24 (threshold chosen there), scored on
// 2013-04-25..05-04. docs/prediction.md: the model flags at most 2% of
// healthy drives; its recall (58%) is short of the 66% goal.
func TestFailureModelOnLaterDays(t *testing.T) {
	resultsWanted(t)
	tb := backblaze(t)
	split, _ := trace.DayOf("2013-04-25")
	src := SmartSource(tb)
	res, err := Drives(src.Until(split), src.From(split), predict.DefaultTrain, true)
	if err != nil {
		t.Fatal(err)
	}
	rule, model := res.Rows[0], res.Rows[1]
	for _, o := range res.Rows {
		t.Logf("%-14s recall %d/%d = %.3f, healthy flagged %d/%d = %.4f, lead %.1f days", o.Policy, o.Caught, o.Failed, o.Recall, o.Flagged, o.Healthy, o.FalsePositiveRate, o.LeadDays)
	}
	if model.FalsePositiveRate > 0.02 {
		t.Errorf("the model flags %.2f%% of healthy drives, above 2%%", 100*model.FalsePositiveRate)
	}
	if model.Recall < 0.55 {
		t.Errorf("recall %.3f fell below the 0.58 measured when this test was written", model.Recall)
	}
	if rule.FalsePositiveRate < 4*model.FalsePositiveRate {
		t.Errorf("the rule flags %.4f, the model %.4f: the model should flag far fewer", rule.FalsePositiveRate, model.FalsePositiveRate)
	}
}

// TestCorrelatedReplay is the SSD ticket replay of docs/prediction.md.
func TestCorrelatedReplay(t *testing.T) {
	resultsWanted(t)
	p := filepath.Join(simtest.TracesDir(t), "failures", "ssd_failure_tag_2018.csv.gz")
	tks, err := trace.LoadSSDTickets(p)
	if err != nil {
		t.Skipf("tickets: %v", err)
	}
	fleet, err := BuildFleet(tks, 20)
	if err != nil {
		t.Fatal(err)
	}
	var rows [2]*ReplayResult
	for i, policy := range []string{Reactive, Predictive} {
		if rows[i], err = Replay(context.Background(), fleet, tks, DefaultReplay, policy); err != nil {
			t.Fatal(err)
		}
		t.Logf("%+v", *rows[i])
	}
	reactive, predictive := rows[0], rows[1]
	cut := 1 - float64(predictive.Interrupted)/float64(reactive.Interrupted)
	t.Logf("interruptions %d -> %d (%.1f%% fewer; Narya's figure is 26%%)", reactive.Interrupted, predictive.Interrupted, 100*cut)
	if cut < 0.10 {
		t.Errorf("predictive interrupts only %.1f%% fewer replicas (measured 15.9%% when written)", 100*cut)
	}
	if d := predictive.DoubleLosses; d.SameNode+d.SameRack+d.SameRoom != 0 {
		t.Errorf("predictive: a correlated failure took two replicas of a group: %+v", d)
	}
	if predictive.GroupsLosingTwo >= reactive.GroupsLosingTwo {
		t.Errorf("groups losing two: predictive %d, reactive %d", predictive.GroupsLosingTwo, reactive.GroupsLosingTwo)
	}
}
