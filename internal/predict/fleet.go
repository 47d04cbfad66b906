package predict

import (
	"fmt"
	"slices"
	"sort"
)

// MinPeers is the least number of units of a class whose values a peer
// feature is computed against; with fewer it is absent.
const MinPeers = 30

// Fleet holds the histories of many units and what their peers look like:
// for every class of unit (a drive model, a node's hardware class) and
// counter signal, the values the class reported on the latest complete
// day. Readings must come in day order (the units of a day in any order).
// It is not safe for concurrent use.
type Fleet struct {
	units map[string]*fleetUnit
	day   int
	begun bool
	// today collects the values reported on the current day, per class and
	// signal; peers are the sorted values of the previous day.
	today map[string]*[NumSignals][]float64
	peers map[string]*[NumSignals][]float64
}

type fleetUnit struct {
	hist  History
	class string
}

// NewFleet returns an empty fleet.
func NewFleet() *Fleet {
	return &Fleet{units: map[string]*fleetUnit{}, today: map[string]*[NumSignals][]float64{}, peers: map[string]*[NumSignals][]float64{}}
}

// Observe adds a unit's reading. A reading of an earlier day than the
// fleet has seen is refused (ErrOutOfOrder) and changes nothing.
func (f *Fleet) Observe(o Observation) error {
	day := o.Reading.Day
	if f.begun && day < f.day {
		return fmt.Errorf("%w: unit %s, day %d after day %d", ErrOutOfOrder, o.Unit, day, f.day)
	}
	u := f.units[o.Unit]
	if u == nil {
		u = &fleetUnit{}
		f.units[o.Unit] = u
	}
	if err := u.hist.Observe(o.Reading); err != nil {
		return fmt.Errorf("unit %s: %w", o.Unit, err)
	}
	if !f.begun || day > f.day {
		f.roll()
		f.day, f.begun = day, true
	}
	u.class = o.Class
	if o.Class == "" {
		return nil
	}
	t := f.today[o.Class]
	if t == nil {
		t = &[NumSignals][]float64{}
		f.today[o.Class] = t
	}
	for s := range NumSignals {
		if signals[s].kind != counter {
			continue
		}
		if v, ok := o.Reading.Get(s); ok {
			t[s] = append(t[s], v)
		}
	}
	return nil
}

// roll makes the finished day's values the peers of the next.
func (f *Fleet) roll() {
	if len(f.today) == 0 {
		return
	}
	for _, t := range f.today {
		for s := range t {
			slices.Sort(t[s])
		}
	}
	f.peers, f.today = f.today, map[string]*[NumSignals][]float64{}
}

// History is the unit's history, nil for a unit never observed.
func (f *Fleet) History(unit string) *History {
	if u := f.units[unit]; u != nil {
		return &u.hist
	}
	return nil
}

// Features appends the unit's feature vector (NumFeatures values, NaN
// where absent): its history's features, then for every counter where it
// stands among its class on the previous day.
func (f *Fleet) Features(unit string, dst []float64) []float64 {
	u := f.units[unit]
	if u == nil {
		for range NumFeatures {
			dst = append(dst, Absent)
		}
		return dst
	}
	dst = appendFeatures(dst, u.hist.readings)
	latest, _ := u.hist.Latest()
	peers := f.peers[u.class]
	for _, s := range peerSignals {
		dst = append(dst, peerRank(peers, s, latest))
	}
	return dst
}

// peerSignals are the counters with a peer feature.
var peerSignals = func() []Signal {
	var out []Signal
	for s := range NumSignals {
		if signals[s].kind == counter {
			out = append(out, s)
		}
	}
	return out
}()

// peerRank is the mid-rank of the unit's value of s among its class's
// values (0: below all, 1: above all); absent without the value or with
// fewer than MinPeers peers.
func peerRank(peers *[NumSignals][]float64, s Signal, r Reading) float64 {
	v, ok := r.Get(s)
	if !ok || peers == nil || len(peers[s]) < MinPeers {
		return Absent
	}
	vals := peers[s]
	lower := sort.SearchFloat64s(vals, v)
	upper := sort.Search(len(vals), func(i int) bool { return vals[i] > v })
	return (float64(lower) + float64(upper-lower)/2) / float64(len(vals))
}
