package stats

import "math"

// BinomialTail is P(X ≥ k) for X ~ Binomial(n, p): the chance of k or more
// successes in n independent trials of probability p.
func BinomialTail(n, k int, p float64) float64 {
	return math.Min(1, math.Exp(LogBinomialTail(n, k, p)))
}

// LogBinomialTail is ln P(X ≥ k) for X ~ Binomial(n, p) (−Inf when the
// probability is 0). Terms are summed in log space from k up, and the sum
// stops once they no longer matter, so large n costs little and tails far
// below the smallest float64 keep their order.
func LogBinomialTail(n, k int, p float64) float64 {
	switch {
	case k <= 0:
		return 0
	case k > n, p <= 0:
		return math.Inf(-1)
	case p >= 1:
		return 0
	}
	lp, lq := math.Log(p), math.Log1p(-p)
	lgN, _ := math.Lgamma(float64(n + 1))
	logTerm := func(i int) float64 {
		a, _ := math.Lgamma(float64(i + 1))
		b, _ := math.Lgamma(float64(n - i + 1))
		return lgN - a - b + float64(i)*lp + float64(n-i)*lq
	}
	first := logTerm(k)
	sum := 0.0
	for i := k; i <= n; i++ {
		t := math.Exp(logTerm(i) - first)
		sum += t
		// Past the mode the terms fall geometrically; stop once they
		// no longer change the sum.
		if float64(i) > float64(n)*p && t < 1e-17*sum {
			break
		}
	}
	return math.Min(0, first+math.Log(sum))
}

// LogFisherCombine combines the natural logarithms of independent
// p-values into the log p-value of Fisher's method: −2 Σ ln pᵢ follows a
// χ² law with 2m degrees of freedom when every null holds, whose survival
// function has the closed form e^{−S} Σ_{i<m} Sⁱ/i! with S = −Σ ln pᵢ.
// No p-values combine to 0 (certain).
func LogFisherCombine(logPs ...float64) float64 {
	m := len(logPs)
	if m == 0 {
		return 0
	}
	s := 0.0
	for _, lp := range logPs {
		if math.IsInf(lp, -1) {
			return math.Inf(-1)
		}
		s -= lp
	}
	if s <= 0 {
		return 0
	}
	// Σ_{i<m} Sⁱ/i! in log space, by the largest term.
	terms := make([]float64, m)
	top := math.Inf(-1)
	for i := range m {
		lf, _ := math.Lgamma(float64(i + 1))
		terms[i] = float64(i)*math.Log(s) - lf
		top = math.Max(top, terms[i])
	}
	sum := 0.0
	for _, t := range terms {
		sum += math.Exp(t - top)
	}
	return math.Min(0, -s+top+math.Log(sum))
}
