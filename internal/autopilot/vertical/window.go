package vertical

import (
	"math"

	"github.com/strata-dev/strata/internal/autopilot/slots"
)

// windowExtreme is the maximum (or the minimum) of the samples seen in the
// last span seconds, kept as n bucket extremes so that its memory is fixed
// whatever the sampling rate: the window it covers is between span − span/n
// and span long. The zero value is unusable; use newWindowMax/newWindowMin.
type windowExtreme struct {
	width   int64 // seconds per bucket
	sign    float64
	index   []int64 // bucket number of each slot (time / width), or -1
	extreme []float64
}

func newWindowMax(span int64, n int) *windowExtreme { return newWindow(span, n, 1) }
func newWindowMin(span int64, n int) *windowExtreme { return newWindow(span, n, -1) }

func newWindow(span int64, n int, sign float64) *windowExtreme {
	if n < 1 {
		n = 1
	}
	width := span / int64(n)
	if width < 1 {
		width = 1
	}
	w := &windowExtreme{width: width, sign: sign, index: make([]int64, n), extreme: make([]float64, n)}
	for k := range w.index {
		w.index[k] = -1
	}
	return w
}

// add records v at time t (seconds). Times must not go backwards by more
// than a bucket; a sample older than the window is ignored.
func (w *windowExtreme) add(t int64, v float64) {
	b := slots.Of(t, w.width)
	slot := int(slots.Ring(b, int64(len(w.index))))
	switch {
	case w.index[slot] == b:
		w.extreme[slot] = math.Max(w.extreme[slot], w.sign*v)
	case w.index[slot] < b:
		w.index[slot], w.extreme[slot] = b, w.sign*v
	}
}

// get returns the extreme of the samples in the window ending at t, and
// false when the window holds none.
func (w *windowExtreme) get(t int64) (float64, bool) {
	b := slots.Of(t, w.width)
	best, ok := math.Inf(-1), false
	for k, idx := range w.index {
		if idx >= 0 && idx > b-int64(len(w.index)) && idx <= b {
			best, ok = math.Max(best, w.extreme[k]), true
		}
	}
	return w.sign * best, ok
}

// reset forgets every sample.
func (w *windowExtreme) reset() {
	for k := range w.index {
		w.index[k] = -1
	}
}
