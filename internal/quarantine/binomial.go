package quarantine

import "math"

// binomialTail is P(X ≥ k) for X ~ Binomial(n, p): the chance that a node
// with n allocations failing independently at rate p has k or more
// failures. Terms are summed in log space from k up, and the sum stops
// once they no longer matter, so a node with many allocations costs little.
func binomialTail(n, k int, p float64) float64 {
	switch {
	case k <= 0:
		return 1
	case k > n:
		return 0
	case p <= 0:
		return 0
	case p >= 1:
		return 1
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
	return math.Min(1, math.Exp(first)*sum)
}
