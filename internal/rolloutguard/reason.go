package rolloutguard

import (
	"fmt"
	"math"
)

// reason words a verdict: what the version does, against what, and how
// sure the test is.
func (g *Guard) reason(v Verdict, s *stratum, ratio float64) string {
	where := ""
	if s.class != (Class{}) {
		where = " on nodes with " + s.class.String()
	}
	d := g.deployment
	var what string
	switch v.Test {
	case TestStarts:
		what = fmt.Sprintf("version %d fails to start%s: %d of %d starts on %d nodes failed within %s, against %s for version %d",
			d.Version, where, s.startFailures, s.startFailures+s.startSuccesses, v.Nodes, g.policy.StartWindow, pct(g.baseStart), d.FromVersion)
	case TestBeside:
		what = fmt.Sprintf("version %d is in trouble more often than version %d beside it%s: %d of %d events hit it where %.1f were expected from its share of the running copies",
			d.Version, d.FromVersion, where, s.eventsNew, s.eventsNew+s.eventsOld, s.expectedNew)
	case TestHistory:
		rate := 0.0
		if s.exposureHours > 0 {
			rate = float64(s.historyEvents) / s.exposureHours
		}
		what = fmt.Sprintf("version %d is in trouble %.2g times per copy-hour%s, against at most %.2g for version %d before the deployment",
			d.Version, rate, where, g.baseRate, d.FromVersion)
	}
	return fmt.Sprintf("%s (%d copies on %d nodes; likelihood ratio %s ≥ %s, about %g× worse)",
		what, v.Allocs, v.Nodes, expString(v.LogLR), expString(v.LogThreshold), ratio)
}

func pct(f float64) string { return fmt.Sprintf("%.1f %%", 100*f) }

// expString writes e^x as a number: "1,234" or "3.2e9".
func expString(x float64) string {
	v := math.Exp(x)
	if v < 1e6 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1e", v)
}
