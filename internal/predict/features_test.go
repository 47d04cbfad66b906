package predict

import (
	"errors"
	"math"
	"slices"
	"testing"
)

func featureOf(t *testing.T, rs []Reading, name string) float64 {
	t.Helper()
	var h History
	for _, r := range rs {
		if err := h.Observe(r); err != nil {
			t.Fatalf("observe: %v", err)
		}
	}
	i := slices.Index(FeatureNames(), name)
	if i < 0 {
		t.Fatalf("no feature %q", name)
	}
	return appendFeatures(nil, h.readings)[i]
}

func TestFeatures(t *testing.T) {
	for _, tc := range []struct {
		name    string
		rs      []Reading
		feature string
		want    float64 // NaN: absent
	}{
		{"level is log1p", []Reading{reading(0, SmartReallocated, 9)}, "smart_5.level", math.Log1p(9)},
		{"an unreported counter is absent, not zero", []Reading{reading(0, SmartPending, 3)}, "smart_5.level", math.NaN()},
		{"a reported zero is zero", []Reading{reading(0, SmartReallocated, 0)}, "smart_5.level", 0},
		{"growth needs an earlier reading", []Reading{reading(0, SmartReallocated, 9)}, "smart_5.growth7", math.NaN()},
		{"growth over the window", []Reading{reading(0, SmartReallocated, 2), reading(3, SmartReallocated, 5), reading(5, SmartReallocated, 9)}, "smart_5.growth7", math.Log1p(7)},
		{"growth over one day looks at the previous reading only", []Reading{reading(0, SmartReallocated, 2), reading(4, SmartReallocated, 5), reading(5, SmartReallocated, 9)}, "smart_5.growth1", math.Log1p(4)},
		{"readings older than the window are not its base", []Reading{reading(0, SmartReallocated, 0), reading(10, SmartReallocated, 3), reading(12, SmartReallocated, 9)}, "smart_5.growth7", math.Log1p(6)},
		{"a reset is no growth", []Reading{reading(0, SmartReallocated, 50), reading(1, SmartReallocated, 3)}, "smart_5.growth1", 0},
		{"growth skips readings without the signal", []Reading{reading(0, SmartReallocated, 1), reading(1, SmartPending, 1), reading(2, SmartReallocated, 4)}, "smart_5.growth7", math.Log1p(3)},
		{"a drive that ran all day", []Reading{reading(0, SmartPowerOnHours, 100), reading(1, SmartPowerOnHours, 124)}, "smart_9.run1", 1},
		{"a drive that stood still", []Reading{reading(0, SmartPowerOnHours, 100), reading(1, SmartPowerOnHours, 100)}, "smart_9.run1", 0},
		{"run rate over a gap is per elapsed hour", []Reading{reading(0, SmartPowerOnHours, 100), reading(2, SmartPowerOnHours, 124)}, "smart_9.run1", 0.5},
		{"the worst day of three", []Reading{reading(0, SmartPowerOnHours, 0), reading(1, SmartPowerOnHours, 6), reading(2, SmartPowerOnHours, 30), reading(3, SmartPowerOnHours, 54)}, "smart_9.runmin3", 0.25},
		{"run rate needs two readings", []Reading{reading(0, SmartPowerOnHours, 100)}, "smart_9.run1", math.NaN()},
		{"frozen counts still reads", []Reading{reading(0, SmartReadErrorRate, 5), reading(1, SmartReadErrorRate, 7), reading(2, SmartReadErrorRate, 7), reading(3, SmartReadErrorRate, 7)}, "smart_1.frozen", 2},
		{"a counter at zero is not frozen", []Reading{reading(0, SmartReadErrorRate, 0), reading(1, SmartReadErrorRate, 0)}, "smart_1.frozen", 0},
		{"temperature change", []Reading{reading(0, SmartTemperature, 30), reading(5, SmartTemperature, 36)}, "smart_194.change7", 6},
		{"gap since the previous reading", []Reading{reading(0, SmartPending, 0), reading(3, SmartPending, 0)}, "gap", 3},
		{"no gap on the first reading", []Reading{reading(0, SmartPending, 0)}, "gap", math.NaN()},
		{"node counters are features too", []Reading{reading(0, EDACCorrected, 10), reading(1, EDACCorrected, 15)}, "edac_ce.growth1", math.Log1p(5)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := featureOf(t, tc.rs, tc.feature)
			if IsAbsent(tc.want) != IsAbsent(got) || (!IsAbsent(got) && math.Abs(got-tc.want) > 1e-12) {
				t.Errorf("%s = %v, want %v", tc.feature, got, tc.want)
			}
		})
	}
}

func TestHistory(t *testing.T) {
	var h History
	for _, d := range []int{0, 1, 2} {
		if err := h.Observe(reading(d, SmartReallocated, d)); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.Observe(reading(1, SmartReallocated, 9)); !errors.Is(err, ErrOutOfOrder) {
		t.Errorf("an older reading: err %v, want ErrOutOfOrder", err)
	}
	if h.Len() != 3 {
		t.Errorf("a refused reading changed the history: %d readings", h.Len())
	}
	if err := h.Observe(reading(2, SmartReallocated, 7)); err != nil {
		t.Fatalf("same day: %v", err)
	}
	if r, _ := h.Latest(); r.values[SmartReallocated] != 7 || h.Len() != 3 {
		t.Errorf("a second reading of a day replaces the first: got %v with %d readings", r.values[SmartReallocated], h.Len())
	}
	if err := h.Observe(reading(2+Window, SmartReallocated, 8)); err != nil {
		t.Fatal(err)
	}
	if h.Len() != 1 {
		t.Errorf("readings a window older stay: %d readings, want 1", h.Len())
	}
}

func TestReadingIgnoresNonNumbers(t *testing.T) {
	var r Reading
	r.Set(SmartReallocated, math.NaN())
	r.Set(SmartPending, math.Inf(1))
	r.Set(NumSignals, 1)
	for _, s := range []Signal{SmartReallocated, SmartPending, NumSignals} {
		if r.Known(s) {
			t.Errorf("signal %v known after a non-number", s)
		}
	}
	if s, ok := SmartSignal(197); !ok || s != SmartPending {
		t.Errorf("SmartSignal(197) = %v, %v", s, ok)
	}
	if _, ok := SmartSignal(2); ok {
		t.Error("SmartSignal(2): the model does not read SMART 2")
	}
}

func TestPeerRankIsAgainstThePreviousDay(t *testing.T) {
	f := NewFleet()
	// Day 0: 40 units of class m at 0, one at 100. Day 1: the last one is
	// judged against day 0's values only.
	for u := range 40 {
		if err := f.Observe(Observation{Unit: string(rune('A' + u)), Class: "m", Reading: reading(0, SmartReallocated, 0)}); err != nil {
			t.Fatal(err)
		}
	}
	x := f.Features("A", nil)
	peer := slices.Index(FeatureNames(), "smart_5.peer")
	if !IsAbsent(x[peer]) {
		t.Errorf("on the first day there are no peers yet: got %v", x[peer])
	}
	if err := f.Observe(Observation{Unit: "A", Class: "m", Reading: reading(1, SmartReallocated, 100)}); err != nil {
		t.Fatal(err)
	}
	x = f.Features("A", nil)
	if x[peer] != 1 {
		t.Errorf("a value above all of the previous day's ranks 1, got %v", x[peer])
	}
	if err := f.Observe(Observation{Unit: "B", Class: "m", Reading: reading(0, SmartReallocated, 0)}); !errors.Is(err, ErrOutOfOrder) {
		t.Errorf("a reading of a day the fleet has left: err %v, want ErrOutOfOrder", err)
	}
	if err := f.Observe(Observation{Unit: "Z", Class: "small", Reading: reading(1, SmartReallocated, 5)}); err != nil {
		t.Fatal(err)
	}
	if x := f.Features("Z", nil); !IsAbsent(x[peer]) {
		t.Errorf("a class without %d peers has no peer rank, got %v", MinPeers, x[peer])
	}
}
