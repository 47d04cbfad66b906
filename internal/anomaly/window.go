package anomaly

import (
	"math"
	"slices"
	"sort"
)

// madToSigma scales a median absolute deviation to a normal law's
// standard deviation (stats.MedianMAD's factor).
const madToSigma = 1.4826

// window is the baseline's samples: a ring in arrival order, so that the
// oldest leaves first, and the same values kept sorted, so that the median
// and the MAD cost O(n) a sample instead of two sorts.
type window struct {
	ring   []float64
	next   int
	sorted []float64
	size   int
}

func newWindow(size int) *window {
	return &window{ring: make([]float64, 0, size), sorted: make([]float64, 0, size), size: size}
}

func (w *window) len() int { return len(w.ring) }

func (w *window) reset() { w.ring, w.sorted, w.next = w.ring[:0], w.sorted[:0], 0 }

// add keeps y, dropping the oldest sample once the window is full.
func (w *window) add(y float64) {
	if len(w.ring) < w.size {
		w.ring = append(w.ring, y)
	} else {
		old := w.ring[w.next]
		w.ring[w.next] = y
		w.next = (w.next + 1) % w.size
		i := sort.SearchFloat64s(w.sorted, old)
		w.sorted = slices.Delete(w.sorted, i, i+1)
	}
	i := sort.SearchFloat64s(w.sorted, y)
	w.sorted = slices.Insert(w.sorted, i, y)
}

// median is the median of the samples (NaN for none).
func (w *window) median() float64 {
	n := len(w.sorted)
	switch {
	case n == 0:
		return math.NaN()
	case n%2 == 1:
		return w.sorted[n/2]
	}
	return (w.sorted[n/2-1] + w.sorted[n/2]) / 2
}

// medianMAD is the median and the MAD scaled to a standard deviation. The
// deviations below the median grow leftwards and those above it
// rightwards: a merge of the two runs finds their middle without sorting.
func (w *window) medianMAD() (float64, float64) {
	n := len(w.sorted)
	if n == 0 {
		return math.NaN(), math.NaN()
	}
	m := w.median()
	right := sort.SearchFloat64s(w.sorted, m) // first ≥ m
	left := right - 1
	next := func() float64 {
		if left >= 0 && (right >= n || m-w.sorted[left] <= w.sorted[right]-m) {
			left--
			return m - w.sorted[left+1]
		}
		right++
		return w.sorted[right-1] - m
	}
	var lo, hi float64
	for i := 0; i <= n/2; i++ {
		lo, hi = hi, next()
	}
	mad := hi
	if n%2 == 0 {
		mad = (lo + hi) / 2
	}
	return m, madToSigma * mad
}
