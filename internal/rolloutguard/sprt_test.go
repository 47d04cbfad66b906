package rolloutguard

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestMixtureFalseAlarmsBoundedByAlpha: under the null, the mixture's
// likelihood ratio ever reaches 1/α in at most about α of the streams,
// however long they are watched (Ville's inequality), for Bernoulli trials
// with a changing null probability and for Poisson events.
func TestMixtureFalseAlarmsBoundedByAlpha(t *testing.T) {
	const alpha, streams, steps = 0.05, 2000, 400
	ratios := Policy{}.WithDefaults().Ratios
	rng := rand.New(rand.NewPCG(7, 7))
	bernoulli, poisson := 0, 0
	for range streams {
		b, p := newMixture(ratios), newMixture(ratios)
		bHit, pHit := false, false
		for range steps {
			q := 0.05 + 0.9*rng.Float64() // the null changes trial by trial
			b.bernoulli(q, rng.Float64() < q)
			// Poisson at rate 1 per unit, in steps of 0.1.
			p.poissonExposure(0.1)
			if rng.Float64() < 0.1 {
				p.poissonEvent()
			}
			bHit = bHit || b.logValue() >= math.Log(1/alpha)
			pHit = pHit || p.logValue() >= math.Log(1/alpha)
		}
		if bHit {
			bernoulli++
		}
		if pHit {
			poisson++
		}
	}
	// α plus three binomial standard deviations.
	limit := int(streams * (alpha + 3*math.Sqrt(alpha*(1-alpha)/streams)))
	if bernoulli > limit || poisson > limit {
		t.Fatalf("false alarms: Bernoulli %d, Poisson %d of %d streams; want at most %d", bernoulli, poisson, streams, limit)
	}
}

// TestMixtureFindsEffects: a large effect is found in a handful of trials,
// a twofold one in tens.
func TestMixtureFindsEffects(t *testing.T) {
	ratios := Policy{}.WithDefaults().Ratios
	threshold := math.Log(100)
	m := newMixture(ratios)
	n := 0
	for m.logValue() < threshold {
		m.bernoulli(0.02, true) // every start fails against 2 %
		n++
	}
	if n > 4 {
		t.Fatalf("every start failing against 2 %%: found after %d, want at most 4", n)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	m, n = newMixture(ratios), 0
	for m.logValue() < threshold && n < 10000 {
		m.bernoulli(0.2, rng.Float64() < 1.0/3) // odds twice the null's
		n++
	}
	if n > 600 {
		t.Fatalf("a twofold effect: found after %d trials, want at most 600", n)
	}
}

func TestBounds(t *testing.T) {
	if got := wilsonUpper(0, 0, 2, 0.01); got != 0.5 {
		t.Errorf("no trials: %g, want 0.5 (nothing known)", got)
	}
	if got := wilsonUpper(0, 1000, 2, 0.01); got < 0.0039 || got > 0.01 {
		t.Errorf("0 of 1000: %g, want the floor 0.01", got)
	}
	if got := wilsonUpper(50, 1000, 2, 0.01); got < 0.05 || got > 0.07 {
		t.Errorf("50 of 1000: %g, want a little above 5 %%", got)
	}
	if got := poissonUpper(10, 100, 2); got < 0.1 || got > 0.2 {
		t.Errorf("10 events in 100 h: %g per hour, want a little above 0.1", got)
	}
	if !math.IsInf(poissonUpper(3, 0, 2), 1) {
		t.Error("no exposure should be no baseline")
	}
}
