package vertical

import (
	"math"

	"github.com/strata-dev/strata/internal/autopilot/slots"
)

// burstMeter measures how bursty a task is: the largest share of its peak
// by which usage rose and fell back within a short span, remembered with a
// half-life. Ramps and level shifts are not bursts (usage does not fall
// back); a task whose usage doubles for a minute and returns is.
//
// The span is kept as n buckets, each with its first sample and its
// maximum, so memory is fixed whatever the sampling rate.
type burstMeter struct {
	width    int64
	index    []int64
	first    []float64
	max      []float64
	halfLife float64 // seconds
	level    float64 // burstiness at time at
	at       int64
}

func newBurstMeter(span, halfLife int64, n int) *burstMeter {
	width := span / int64(n)
	if width < 1 {
		width = 1
	}
	m := &burstMeter{width: width, index: make([]int64, n), first: make([]float64, n), max: make([]float64, n),
		halfLife: float64(halfLife)}
	for k := range m.index {
		m.index[k] = -1
	}
	return m
}

// add records a sample; peak is the task's recent peak, the scale of its
// bursts.
func (m *burstMeter) add(t int64, v, peak float64) {
	b := slots.Of(t, m.width)
	slot := int(slots.Ring(b, int64(len(m.index))))
	switch {
	case m.index[slot] == b:
		m.max[slot] = math.Max(m.max[slot], v)
	case m.index[slot] < b:
		m.index[slot], m.first[slot], m.max[slot] = b, v, v
	}
	// The excursion of the span: its highest point above the higher of
	// where it started and where it is now.
	oldest, top := int64(math.MaxInt64), v
	start := v
	for k, idx := range m.index {
		if idx < 0 || idx <= b-int64(len(m.index)) || idx > b {
			continue
		}
		top = math.Max(top, m.max[k])
		if idx < oldest {
			oldest, start = idx, m.first[k]
		}
	}
	excursion := 0.0
	if peak > 0 {
		excursion = (top - math.Max(start, v)) / peak
	}
	m.level = math.Max(m.get(t), excursion)
	m.at = t
}

// get is the burstiness at time t.
func (m *burstMeter) get(t int64) float64 {
	if m.level == 0 || t <= m.at {
		return m.level
	}
	return m.level * math.Exp2(-float64(t-m.at)/m.halfLife)
}
