package stats

import (
	"math"
	"math/rand/v2"
)

// PoissonDraw draws from Poisson(lambda) with the caller's source: exactly
// (Knuth's product of uniforms) up to a rate of 30, by the normal
// approximation, rounded and never negative, above. For simulations and
// their tests; the package's judgements never draw.
func PoissonDraw(rng *rand.Rand, lambda float64) int {
	if lambda > 30 {
		return max(0, int(math.Round(lambda+math.Sqrt(lambda)*rng.NormFloat64())))
	}
	l, k, p := math.Exp(-lambda), 0, 1.0
	for {
		p *= rng.Float64()
		if p <= l {
			return k
		}
		k++
	}
}
