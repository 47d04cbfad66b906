package rolloutguard

import "math"

// mixture is a mixture sequential probability ratio test: one likelihood
// ratio per alternative effect size, averaged with equal weights. Under
// the null each ratio is a nonnegative martingale with mean 1 (a
// supermartingale when the truth is better than the null), so is their
// mean, and by Ville's inequality it ever reaches 1/α with probability at
// most α. Mixing effect sizes spares choosing one: a version that always
// crashes is caught in three starts, one that fails twice as often in
// dozens.
type mixture struct {
	ratios []float64 // odds or rate ratios of the alternatives
	logLR  []float64
}

func newMixture(ratios []float64) *mixture {
	return &mixture{ratios: ratios, logLR: make([]float64, len(ratios))}
}

// bernoulli adds one trial that succeeds (the bad outcome: a failed start,
// an event on the new version) with probability p under the null; under
// alternative j the odds of success are ratios[j] times the null's.
// Trials with p of 0 or 1 say nothing and are skipped.
func (m *mixture) bernoulli(p float64, bad bool) {
	m.add(bernoulliDeltas(m.ratios, p, bad), 1)
}

// bernoulliDeltas are the log likelihood ratios one trial adds under each
// alternative (nil when p is 0 or 1: the trial says nothing).
func bernoulliDeltas(ratios []float64, p float64, bad bool) []float64 {
	if p <= 0 || p >= 1 {
		return nil
	}
	out := make([]float64, len(ratios))
	for j, r := range ratios {
		p1 := r * p / (1 - p + r*p)
		if bad {
			out[j] = math.Log(p1 / p)
		} else {
			out[j] = math.Log1p(-p1) - math.Log1p(-p)
		}
	}
	return out
}

// add adds sign × deltas (sign −1 takes back what an explained event
// added).
func (m *mixture) add(deltas []float64, sign float64) {
	for j, d := range deltas {
		m.logLR[j] += sign * d
	}
}

// reset forgets everything.
func (m *mixture) reset() { clear(m.logLR) }

// poissonEvent adds one event of a Poisson process whose rate is ratios[j]
// times the null's under alternative j.
func (m *mixture) poissonEvent() {
	for j, r := range m.ratios {
		m.logLR[j] += math.Log(r)
	}
}

// poissonExposure adds exposure in units of events expected under the
// null (rate × time): under alternative j, (r−1) times more were expected.
func (m *mixture) poissonExposure(expected float64) {
	if expected <= 0 {
		return
	}
	for j, r := range m.ratios {
		m.logLR[j] -= (r - 1) * expected
	}
}

// logValue is the log of the mixture's likelihood ratio.
func (m *mixture) logValue() float64 {
	top := math.Inf(-1)
	for _, l := range m.logLR {
		top = math.Max(top, l)
	}
	sum := 0.0
	for _, l := range m.logLR {
		sum += math.Exp(l - top)
	}
	return top + math.Log(sum/float64(len(m.logLR)))
}

// bestRatio is the alternative the evidence favours most.
func (m *mixture) bestRatio() float64 {
	best := 0
	for j, l := range m.logLR {
		if l > m.logLR[best] {
			best = j
		}
	}
	return m.ratios[best]
}

// wilsonUpper is an upper confidence bound of a proportion (Wilson's
// score interval at z), never below floor: the old version's start failure
// rate is estimated from few starts, and the test must not blame the new
// version for the estimate's luck.
func wilsonUpper(failed, trials int, z, floor float64) float64 {
	if trials <= 0 {
		return math.Max(floor, 0.5)
	}
	n, p := float64(trials), float64(failed)/float64(trials)
	centre := p + z*z/(2*n)
	margin := z * math.Sqrt(p*(1-p)/n+z*z/(4*n*n))
	return math.Max(floor, math.Min(1, (centre+margin)/(1+z*z/n)))
}

// poissonUpper is an upper confidence bound of a Poisson rate from events
// seen over exposure (hours): (k + z²/2 + z√(k + z²/4)) / exposure, the
// score bound; +Inf without exposure (no baseline: the test is inert).
func poissonUpper(events int, exposureHours, z float64) float64 {
	if exposureHours <= 0 {
		return math.Inf(1)
	}
	k := float64(events)
	return (k + z*z/2 + z*math.Sqrt(k+z*z/4)) / exposureHours
}
