package horizontal

import (
	"math"
	"sort"

	"github.com/strata-dev/strata/internal/autopilot/slots"
)

// seasonalProfile remembers, for every slot of the day and of the week,
// what that slot saw on its last few occurrences (peak and mean work in
// flight, arrivals), and forecasts a slot from them. Memory is fixed:
// slotsPerDay × days + slotsPerWeek × weeks statistics of 12 bytes (about
// 32 KiB with 15-minute slots, 7 days and 3 weeks: 96 × 7 + 672 × 3).
type seasonalProfile struct {
	slot     int64 // seconds
	perDay   int
	daily    *slotHistory // slots of the day, last `days` days
	weekly   *slotHistory // slots of the week, last `weeks` weeks
	open     int64        // slot number (time / slot) being observed, -1 before the first
	openMax  int          // its peak so far
	openArr  int          // arrivals so far
	openBusy float64      // work-seconds in flight so far
	seen     int64        // slots committed, to know how much history there is
	first    int64        // first slot number observed
}

// slotStats is what one occurrence of a slot saw.
type slotStats struct {
	peak     int32   // highest work in flight
	arrivals int32   // requests that arrived
	load     float32 // mean work in flight
}

// slotHistory is a ring of the last n observations of each of size slots.
type slotHistory struct {
	n      int
	peaks  []slotStats // size × n
	filled []uint8
	next   []uint8
}

func newSlotHistory(size, n int) *slotHistory {
	h := &slotHistory{n: n, peaks: make([]slotStats, size*n), filled: make([]uint8, size), next: make([]uint8, size)}
	return h
}

func (h *slotHistory) add(slot int, st slotStats) {
	h.peaks[slot*h.n+int(h.next[slot])] = st
	h.next[slot] = uint8((int(h.next[slot]) + 1) % h.n)
	if int(h.filled[slot]) < h.n {
		h.filled[slot]++
	}
}

// values returns the slot's observations, newest first.
func (h *slotHistory) values(slot int, stat func(slotStats) float64) []float64 {
	out := make([]float64, 0, h.filled[slot])
	for k := 1; k <= int(h.filled[slot]); k++ {
		i := (int(h.next[slot]) - k + h.n) % h.n
		out = append(out, stat(h.peaks[slot*h.n+i]))
	}
	return out
}

func newSeasonalProfile(slotSeconds int64, days, weeks int) *seasonalProfile {
	perDay := int(86400 / slotSeconds)
	return &seasonalProfile{slot: slotSeconds, perDay: perDay, daily: newSlotHistory(perDay, days),
		weekly: newSlotHistory(perDay*7, weeks), open: -1}
}

// observe records the peak work in flight seen up to time now; slots that
// ended are committed (a slot with no observation at all, a gap in the
// telemetry, is not).
func (p *seasonalProfile) observe(now int64, peak, arrivals int, workSeconds float64) {
	s := slots.Of(now, p.slot)
	if p.open < 0 {
		p.open, p.first = s, s
	}
	if s != p.open {
		p.commit()
		p.open, p.openMax, p.openArr, p.openBusy = s, 0, 0, 0
	}
	p.openMax = max(p.openMax, peak)
	p.openArr += arrivals
	p.openBusy += workSeconds
}

func (p *seasonalProfile) commit() {
	day := int(slots.Ring(p.open, int64(p.perDay)))
	// Unix day 0 was a Thursday; slots of the week start on Monday 00:00 UTC.
	week := int(slots.Ring(p.open+3*int64(p.perDay), int64(p.perDay*7)))
	st := slotStats{peak: int32(p.openMax), arrivals: int32(p.openArr), load: float32(p.openBusy / float64(p.slot))}
	p.daily.add(day, st)
	p.weekly.add(week, st)
	p.seen++
}

// forecastOf is one slot's forecast and where it came from.
type forecastOf struct {
	value  float64
	daily  float64
	weekly float64
	days   int // observations behind the daily figure
	weeks  int // behind the weekly one
}

// weekHalfLife is the half-life, in weeks, of a slot's past weeks.
const weekHalfLife = 2

// around returns, occurrence by occurrence (newest first), the highest
// figure of a slot and its neighbour on each side.
func (h *slotHistory) around(slot int, stat func(slotStats) float64) []float64 {
	var out []float64
	size := int64(len(h.filled))
	for k := -1; k <= 1; k++ {
		for i, x := range h.values(int(slots.Ring(int64(slot+k), size)), stat) {
			if i >= len(out) {
				out = append(out, x)
			} else {
				out[i] = max(out[i], x)
			}
		}
	}
	return out
}

// Statistics of a slot a forecast can be made of.
var (
	statLoad     = func(s slotStats) float64 { return float64(s.load) }
	statArrivals = func(s slotStats) float64 { return float64(s.arrivals) }
)

// forecast is the expected value of a statistic in the slot holding time
// t: a weighted quantile of the slot's figures over the last days (each
// day's figure is the highest of the slot and its two neighbours, for
// demand that comes a little early or late), blended with the same slot of
// the previous weeks when there are any.
func (p *seasonalProfile) forecast(t int64, q, dayHalfLife, weeklyWeight float64, stat func(slotStats) float64) forecastOf {
	s := slots.Of(t, p.slot)
	day := int(slots.Ring(s, int64(p.perDay)))
	week := int(slots.Ring(s+3*int64(p.perDay), int64(p.perDay*7)))
	var f forecastOf
	daily := p.daily.around(day, stat)
	f.days = len(daily)
	f.daily = weightedQuantile(daily, q, dayHalfLife)
	weekly := p.weekly.around(week, stat)
	f.weeks = len(weekly)
	f.weekly = weightedQuantile(weekly, q, weekHalfLife)
	f.value = f.daily
	if f.weeks > 0 {
		f.value = (1-weeklyWeight)*f.daily + weeklyWeight*f.weekly
	}
	return f
}

// weightedQuantile is the q-quantile of values (newest first) where the
// value k places back weighs 2^(−k/halfLife).
func weightedQuantile(values []float64, q, halfLife float64) float64 {
	if len(values) == 0 {
		return 0
	}
	type wv struct {
		v float64
		w float64
	}
	xs := make([]wv, len(values))
	total := 0.0
	for k, v := range values {
		w := math.Exp2(-float64(k) / halfLife)
		xs[k] = wv{v, w}
		total += w
	}
	sort.Slice(xs, func(i, j int) bool { return xs[i].v < xs[j].v })
	acc := 0.0
	for _, x := range xs {
		acc += x.w
		if acc >= q*total-1e-9 {
			return x.v
		}
	}
	return xs[len(xs)-1].v
}
