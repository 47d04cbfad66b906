package failsim

import (
	"path/filepath"
	"testing"

	"github.com/strata-dev/strata/internal/predict"
	"github.com/strata-dev/strata/internal/sim/simtest"
	"github.com/strata-dev/strata/internal/sim/trace"
)

// backblaze loads the shared drive-stats file, skipping without it.
func backblaze(tb testing.TB) *trace.SmartTable {
	tb.Helper()
	p := filepath.Join(simtest.TracesDir(tb), "failures", "backblaze-2013-04-10..05-04.csv.gz")
	t, err := trace.LoadBackblaze(p, SmartAttrs)
	if err != nil {
		tb.Skipf("drive stats not loadable: %v", err)
	}
	return t
}

// TestSmartRuleOnTheSharedDays validates the harness: on the shared 25
// days the naive rule "SMART 5, 187, 197 or 198 raw > 0" catches 73% of
// the failures a day or more ahead and flags 9% of the healthy drives.
func TestSmartRuleOnTheSharedDays(t *testing.T) {
	tb := backblaze(t)
	src := SmartSource(tb)
	out, err := predict.Evaluate(nil, src, []predict.Policy{predict.SmartRule{}})
	if err != nil {
		t.Fatal(err)
	}
	o := out[0]
	t.Logf("smart-rule: recall %d/%d = %.3f, healthy flagged %d/%d = %.4f, lead %.1f days", o.Caught, o.Failed, o.Recall, o.Flagged, o.Healthy, o.FalsePositiveRate, o.LeadDays)
	if o.Failed != 62 || o.Caught != 45 {
		t.Errorf("caught %d of %d failures, want 45 of 62 (73%%)", o.Caught, o.Failed)
	}
	if o.FalsePositiveRate < 0.085 || o.FalsePositiveRate > 0.095 {
		t.Errorf("healthy flagged %.4f, want 9%%", o.FalsePositiveRate)
	}
}
