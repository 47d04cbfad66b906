package stats

import (
	"math"
	"slices"
)

// madToSigma scales a median absolute deviation to the standard deviation
// of a normal law: MAD = σ·Φ⁻¹(3/4).
const madToSigma = 1.4826

// Median is the median of xs (the mean of the two middle values for an
// even count), NaN for none. It sorts a copy: xs is left as it was.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return sortedMedian(s)
}

func sortedMedian(s []float64) float64 {
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}

// MedianMAD is the median of xs and its median absolute deviation scaled
// to a normal law's standard deviation (1.4826·MAD): a location and a
// scale that a third of the values may be wild without moving. NaN, NaN
// for none.
func MedianMAD(xs []float64) (median, scale float64) {
	if len(xs) == 0 {
		return math.NaN(), math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	median = sortedMedian(s)
	for i, x := range s {
		s[i] = math.Abs(x - median)
	}
	slices.Sort(s)
	return median, madToSigma * sortedMedian(s)
}
