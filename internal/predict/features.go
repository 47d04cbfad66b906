package predict

import (
	"math"
)

// Growth windows, in days.
const (
	ShortDays = 7
	LongDays  = 14
)

// Absent is how a feature vector marks a feature whose inputs were not
// reported. Trees send it down the branch each split learned for it.
var Absent = math.NaN()

// IsAbsent reports whether feature value v is absent.
func IsAbsent(v float64) bool { return v != v }

// feature is one column of the feature vector: a pure function of a unit's
// readings (oldest first, the scored day last).
type feature struct {
	name string
	eval func(rs []Reading) float64
}

// features is the feature table, built once from the signal table: per
// counter its level and its growth over the last day, ShortDays and
// LongDays; per gauge its level and change over ShortDays; for the power-on
// clock the unit's age and the share of the last day(s) it ran; per
// churning counter how many reads in a row it stood still; and the gap
// since the previous report.
var features = buildFeatures()

// NumFeatures is the length of a feature vector: the history's features,
// then one peer rank per counter (Fleet.Features).
var NumFeatures = len(features) + len(peerSignals)

// FeatureNames lists the feature vector's columns.
func FeatureNames() []string {
	names := make([]string, 0, NumFeatures)
	for _, f := range features {
		names = append(names, f.name)
	}
	for _, s := range peerSignals {
		names = append(names, s.String()+".peer")
	}
	return names
}

func buildFeatures() []feature {
	var fs []feature
	for s := range NumSignals {
		name := s.String()
		switch signals[s].kind {
		case counter:
			fs = append(fs,
				feature{name + ".level", func(rs []Reading) float64 { return level(rs, s) }},
				feature{name + ".growth1", func(rs []Reading) float64 { return growth(rs, s, 1) }},
				feature{name + ".growth7", func(rs []Reading) float64 { return growth(rs, s, ShortDays) }},
				feature{name + ".growth14", func(rs []Reading) float64 { return growth(rs, s, LongDays) }})
		case gauge:
			fs = append(fs,
				feature{name + ".level", func(rs []Reading) float64 { return rawLevel(rs, s) }},
				feature{name + ".change7", func(rs []Reading) float64 { return change(rs, s, ShortDays) }})
		case clock:
			fs = append(fs,
				feature{name + ".age", func(rs []Reading) float64 { return level(rs, s) }},
				feature{name + ".run1", func(rs []Reading) float64 { return runRate(rs, s, 1) }},
				feature{name + ".runmin3", func(rs []Reading) float64 { return runRate(rs, s, 3) }})
		case churning:
			fs = append(fs, feature{name + ".frozen", func(rs []Reading) float64 { return frozen(rs, s) }})
		}
	}
	fs = append(fs, feature{"gap", gap})
	return fs
}

func appendFeatures(dst []float64, rs []Reading) []float64 {
	for _, f := range features {
		v := Absent
		if len(rs) > 0 {
			v = f.eval(rs)
		}
		dst = append(dst, v)
	}
	return dst
}

// level is log1p of the latest value (counters span orders of magnitude).
func level(rs []Reading, s Signal) float64 {
	v, ok := rs[len(rs)-1].Get(s)
	if !ok {
		return Absent
	}
	return math.Log1p(max(v, 0))
}

func rawLevel(rs []Reading, s Signal) float64 {
	v, ok := rs[len(rs)-1].Get(s)
	if !ok {
		return Absent
	}
	return v
}

// base is the oldest reading of s within days before the latest (the
// latest excluded), or ok=false when there is none.
func base(rs []Reading, s Signal, days int) (v float64, day int, ok bool) {
	last := rs[len(rs)-1].Day
	for i := range len(rs) - 1 {
		if rs[i].Day < last-days {
			continue
		}
		if v, ok := rs[i].Get(s); ok {
			return v, rs[i].Day, true
		}
	}
	return 0, 0, false
}

// growth is log1p of how much counter s grew over the last days (0 when
// it fell: a reset is not growth); absent without an earlier reading in
// the window.
func growth(rs []Reading, s Signal, days int) float64 {
	d, ok := delta(rs, s, days)
	if !ok {
		return Absent
	}
	return math.Log1p(max(d, 0))
}

// change is how much gauge s moved over the last days.
func change(rs []Reading, s Signal, days int) float64 {
	d, ok := delta(rs, s, days)
	if !ok {
		return Absent
	}
	return d
}

// delta is the latest value of s minus its oldest within days before it.
func delta(rs []Reading, s Signal, days int) (float64, bool) {
	v, ok := rs[len(rs)-1].Get(s)
	if !ok {
		return 0, false
	}
	b, _, ok := base(rs, s, days)
	return v - b, ok
}

// runRate is the smallest share of the elapsed hours the power-on clock
// advanced between consecutive readings over the last days (1: ran all
// the time, 0: stood still); absent without two readings in the window.
func runRate(rs []Reading, s Signal, days int) float64 {
	last := rs[len(rs)-1].Day
	rate, seen := math.Inf(1), false
	for i := len(rs) - 1; i > 0; i-- {
		if rs[i].Day < last-days+1 {
			break
		}
		cur, ok1 := rs[i].Get(s)
		prev, ok2 := rs[i-1].Get(s)
		if !ok1 || !ok2 {
			continue
		}
		elapsed := float64(rs[i].Day-rs[i-1].Day) * 24
		rate, seen = min(rate, min(max((cur-prev)/elapsed, 0), 2)), true
	}
	if !seen {
		return Absent
	}
	return rate
}

// frozen counts the latest consecutive readings in which a churning
// counter did not move while non-zero (a live drive's changes at every
// read); absent without an earlier reading.
func frozen(rs []Reading, s Signal) float64 {
	v, ok := rs[len(rs)-1].Get(s)
	if !ok || len(rs) < 2 {
		return Absent
	}
	if v == 0 {
		return 0
	}
	n := 0
	for i := len(rs) - 2; i >= 0; i-- {
		p, ok := rs[i].Get(s)
		if !ok || p != v {
			break
		}
		n++
	}
	return float64(n)
}

// gap is the days since the previous reading; absent for the first.
func gap(rs []Reading) float64 {
	if len(rs) < 2 {
		return Absent
	}
	return float64(rs[len(rs)-1].Day - rs[len(rs)-2].Day)
}
