package failsim

import (
	"os"
	"testing"
	"time"

	"github.com/strata-dev/strata/internal/predict"
	"github.com/strata-dev/strata/internal/sim/trace"
)

func TestExp(t *testing.T) {
	if os.Getenv("EXP") == "" {
		t.Skip()
	}
	start := time.Now()
	tb, err := trace.LoadBackblaze("/work/shared/traces/failures/backblaze-2013-04-10..05-04.csv.gz", SmartAttrs)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("loaded %d rows in %v attrs %v", len(tb.Rows), time.Since(start), tb.Attrs)
	split, _ := trace.DayOf("2013-04-25")
	src := SmartSource(tb)
	cfg := predict.DefaultTrain
	start = time.Now()
	m, rep, err := predict.Train(src.Until(split), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("train %v: %+v", time.Since(start), rep)
	_ = m
	if os.Getenv("EXP_GRID") != "" {
		for _, nr := range []float64{1} {
			for _, seed := range []uint64{1, 2, 3, 4} {
				c := cfg
				c.NegativeRate, c.Seed = nr, seed
				st := time.Now()
				_, rep, err := predict.Train(src.Until(split), c)
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("neg=%.1f seed=%d: oof recall %.3f fpr %.4f (%v)", nr, seed, rep.OOFRecall, rep.OOFFalsePos, time.Since(st))
			}
		}
	}
	if os.Getenv("EXP_TEST") != "" {
		out, err := predict.Evaluate(src.Until(split), src.From(split), []predict.Policy{predict.SmartRule{}, predict.ModelPolicy{Label: "model", Model: m}})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range out {
			t.Logf("%+v", o)
		}
	}
}
