package predict

import (
	"fmt"
	"slices"
)

// Policy decides, day by day, whether a unit is flagged as about to fail.
// Flag sees the unit's history up to and including the day judged (never
// later) and the features of that day.
type Policy interface {
	Name() string
	Flag(h *History, x []float64) bool
}

// ModelPolicy flags what a model scores at or above its threshold.
type ModelPolicy struct {
	Label string
	Model *Model
}

// Name implements Policy.
func (p ModelPolicy) Name() string { return p.Label }

// Flag implements Policy.
func (p ModelPolicy) Flag(_ *History, x []float64) bool { return p.Model.Flag(x) }

// SmartRule is the naive rule the model is measured against: a drive is
// flagged on a day when any of SMART 5, 187, 197 or 198 has a raw value
// above zero.
type SmartRule struct{}

// SmartRuleName is SmartRule's name in results.
const SmartRuleName = "smart-rule"

// Name implements Policy.
func (SmartRule) Name() string { return SmartRuleName }

// Flag implements Policy.
func (SmartRule) Flag(h *History, _ []float64) bool {
	r, ok := h.Latest()
	if !ok {
		return false
	}
	for _, s := range [...]Signal{SmartReallocated, SmartReportedUncorrect, SmartPending, SmartOfflineUncorrect} {
		if v, ok := r.Get(s); ok && v > 0 {
			return true
		}
	}
	return false
}

var (
	_ Policy = ModelPolicy{}
	_ Policy = SmartRule{}
)

// Outcome is how one policy did on a stream, unit by unit.
type Outcome struct {
	Policy string `json:"policy"`
	// Recall is the share of units that failed in the stream that were
	// flagged on some day before their failure day.
	Recall float64 `json:"recall"`
	// FalsePositiveRate is the share of units that never failed in the
	// stream that were flagged on some day.
	FalsePositiveRate float64 `json:"falsePositiveRate"`
	// LeadDays is the median, over the failures caught, of the days from
	// the first flag to the failure.
	LeadDays float64 `json:"leadDays"`
	Caught   int     `json:"caught"`
	Failed   int     `json:"failed"`
	Flagged  int     `json:"flaggedHealthy"`
	Healthy  int     `json:"healthy"`
}

// Evaluate replays test day by day and judges each policy on every
// reading. warm, when not nil, is history from before the test stream
// (the training stream): its readings older than the test's first day
// fill the units' histories, as a cell's would be, and are never judged.
// Without it (or when it holds nothing older) the test's first day is
// history only: every unit would be judged with no past at all, which no
// later day looks like.
func Evaluate(warm, test Source, policies []Policy) ([]Outcome, error) {
	facts, err := scanFacts(test)
	if err != nil {
		return nil, err
	}
	fleet := NewFleet()
	warmed := false
	if warm != nil {
		var failed error
		err := warm.Until(facts.first)(func(o Observation) bool {
			warmed = true
			if err := fleet.Observe(o); err != nil {
				failed = fmt.Errorf("warm-up: %w", err)
				return false
			}
			return true
		})
		if err == nil {
			err = failed
		}
		if err != nil {
			return nil, err
		}
	}
	firstFlag := make([]map[string]int, len(policies))
	for i := range firstFlag {
		firstFlag[i] = map[string]int{}
	}
	seen := map[string]bool{}
	x := make([]float64, 0, NumFeatures)
	var failed error
	err = test(func(o Observation) bool {
		seen[o.Unit] = true
		if err := fleet.Observe(o); err != nil {
			failed = err
			return false
		}
		h := fleet.History(o.Unit)
		if fd, fails := facts.failDay[o.Unit]; fails && o.Reading.Day >= fd {
			return true // a flag on the failure day or later comes too late
		}
		if !warmed && o.Reading.Day == facts.first {
			return true // nothing before it: the stream's first day is history only, as in Train
		}
		x = fleet.Features(o.Unit, x[:0])
		for i, p := range policies {
			if _, done := firstFlag[i][o.Unit]; !done && p.Flag(h, x) {
				firstFlag[i][o.Unit] = o.Reading.Day
			}
		}
		return true
	})
	if err == nil {
		err = failed
	}
	if err != nil {
		return nil, err
	}
	out := make([]Outcome, len(policies))
	for i, p := range policies {
		o := Outcome{Policy: p.Name(), Failed: len(facts.failDay), Healthy: len(seen) - len(facts.failDay)}
		var leads []int
		for u, day := range firstFlag[i] {
			if fd, fails := facts.failDay[u]; fails {
				o.Caught++
				leads = append(leads, fd-day)
			} else {
				o.Flagged++
			}
		}
		o.Recall = ratio(o.Caught, o.Failed)
		o.FalsePositiveRate = ratio(o.Flagged, o.Healthy)
		o.LeadDays = median(leads)
		out[i] = o
	}
	return out, nil
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func median(v []int) float64 {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return float64(v[n/2])
	}
	return float64(v[n/2-1]+v[n/2]) / 2
}
