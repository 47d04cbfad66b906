package horizontal

import (
	"errors"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

const sync = 15

// busyDays feeds days of a daily cycle: from 10:00 to 12:00 UTC four
// requests in flight and one arriving every sync, nothing otherwise.
func busyDays(t *testing.T, a *Autoscaler, days int) int64 {
	t.Helper()
	now := int64(0)
	for ; now < int64(days)*86400; now += sync {
		tod := now % 86400
		tel := Telemetry{Now: now, Ready: 1}
		if tod >= 10*3600 && tod < 12*3600 {
			tel = Telemetry{Now: now, Ready: 4, InFlight: 4, PeakInFlight: 4, Arrivals: 1, BusySeconds: 4 * sync, ReadySeconds: 4 * sync}
		}
		a.Decide(tel)
	}
	return now
}

func newAutoscaler(t *testing.T, mod func(*Config)) *Autoscaler {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Min, cfg.Max, cfg.ScaleToZero = 0, 10, true
	if mod != nil {
		mod(&cfg)
	}
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestScalesAheadOfTheDailyCycleAndInAfterIt(t *testing.T) {
	a := newAutoscaler(t, nil)
	day := busyDays(t, a, 3)
	cases := []struct {
		name    string
		at      int64 // seconds after midnight of day 4
		want    int
		source  string
		inflow  int
		explain string
	}{
		{"idle night: zero", 3 * 3600, 0, SourceIdle, 0, "forecast idle"},
		{"a minute before the busy slots: four, ahead of them", 10*3600 - 60, 4, SourceForecast, 0, "forecast busy"},
		{"after the cycle: back to zero", 13 * 3600, 0, SourceIdle, 0, "forecast idle"},
		{"work the forecast missed: reactive, one spare", 16 * 3600, 3, SourceReactive, 2, "2 in flight"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := a.Decide(Telemetry{Now: day + c.at, InFlight: c.inflow, PeakInFlight: c.inflow})
			if d.Replicas != c.want || d.Source != c.source || !strings.Contains(d.Reason, c.explain) {
				t.Fatalf("got %d (%s): %s; want %d (%s) with %q", d.Replicas, d.Source, d.Reason, c.want, c.source, c.explain)
			}
		})
	}
}

func TestForecastOnlyReportsButDoesNotAct(t *testing.T) {
	a := newAutoscaler(t, func(c *Config) { c.Mode = ModeForecastOnly })
	day := busyDays(t, a, 3)
	d := a.Decide(Telemetry{Now: day + 10*3600 - 60})
	if d.Replicas != 0 || d.Forecast != 4 || !strings.Contains(d.Reason, "forecast-only: not acted on") {
		t.Fatalf("got %d, forecast %d: %s; want 0 set, 4 reported", d.Replicas, d.Forecast, d.Reason)
	}
}

func TestHoldsOnMissingOrStaleTelemetry(t *testing.T) {
	cases := []struct {
		name string
		tel  Telemetry
		want string
	}{
		{"metric endpoint answered garbage", Telemetry{Now: 100, Ready: 3, Missing: "queue_length: not a number"}, "telemetry missing: queue_length"},
		{"samples stopped", Telemetry{Now: 100, Ready: 2, Starting: 1, Age: 120}, "telemetry 120s old"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := newAutoscaler(t, nil)
			d := a.Decide(c.tel)
			if !d.Held || d.Source != SourceHold || d.Replicas != 3 || !strings.Contains(d.Reason, c.want) {
				t.Fatalf("got %+v, want 3 replicas held with %q", d, c.want)
			}
		})
	}
}

func TestLeadFollowsMeasuredStartups(t *testing.T) {
	// The slots from 09:45 expect the cycle (a slot's neighbours count,
	// for demand that comes a little early); at 09:42:30 only an
	// autoscaler that measured slow start-ups (200 s) scales out already.
	for _, c := range []struct {
		startup float64
		want    int
	}{{10, 0}, {200, 4}} {
		a := newAutoscaler(t, nil)
		day := busyDays(t, a, 3)
		a.Decide(Telemetry{Now: day + 9*3600, StartupSeconds: []float64{c.startup, c.startup}})
		if d := a.Decide(Telemetry{Now: day + 9*3600 + 45*60 - 150}); d.Replicas != c.want {
			t.Errorf("start-ups of %vs: %d replicas 150 s before the cycle, want %d (%s)", c.startup, d.Replicas, c.want, d.Reason)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	cases := []struct {
		name string
		mod  func(*Config)
		want string
	}{
		{"min above max", func(c *Config) { c.Min, c.Max = 5, 2 }, "min: 5 is above max 2"},
		{"no max", func(c *Config) { c.Max = 0 }, "max: must be ≥ 1"},
		{"scale to zero with a min", func(c *Config) { c.Min, c.ScaleToZero = 1, true }, "scaleToZero: needs min 0"},
		{"unknown mode", func(c *Config) { c.Mode = "psychic" }, `mode: unknown "psychic"`},
		{"slot not dividing a day", func(c *Config) { c.Slot = 7 * time.Minute }, "slot"},
		{"quantile", func(c *Config) { c.Quantile = 2 }, "quantile"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Max = 10
			c.mod(&cfg)
			_, err := New(cfg)
			if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want ErrConfig naming %q", err, c.want)
			}
		})
	}
}

// TestPropertyWithinBounds: whatever the telemetry, a decision is never
// below min nor above max, and held decisions keep the current count
// (within the bounds).
func TestPropertyWithinBounds(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		minR := rapid.IntRange(0, 4).Draw(t, "min")
		maxR := minR + rapid.IntRange(1, 8).Draw(t, "extra")
		cfg := DefaultConfig()
		cfg.Min, cfg.Max, cfg.ScaleToZero = minR, maxR, minR == 0 && rapid.Bool().Draw(t, "toZero")
		cfg.Slot = time.Duration(rapid.SampledFrom([]int{1, 5, 15, 60}).Draw(t, "slotMin")) * time.Minute
		a, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		now := int64(0)
		for i, n := 0, rapid.IntRange(1, 3000).Draw(t, "decisions"); i < n; i++ {
			now += int64(rapid.IntRange(1, 3600).Draw(t, "gap"))
			tel := Telemetry{Now: now, Ready: rapid.IntRange(0, 30).Draw(t, "ready"), Starting: rapid.IntRange(0, 5).Draw(t, "starting"),
				InFlight: rapid.IntRange(0, 40).Draw(t, "inFlight"), Arrivals: rapid.IntRange(0, 50).Draw(t, "arrivals")}
			tel.PeakInFlight = tel.InFlight + rapid.IntRange(0, 5).Draw(t, "peakExtra")
			if rapid.IntRange(0, 9).Draw(t, "missing") == 0 {
				tel.Missing = "gone"
			}
			d := a.Decide(tel)
			if d.Replicas < minR || d.Replicas > maxR {
				t.Fatalf("decision %d outside [%d, %d]: %s", d.Replicas, minR, maxR, d.Reason)
			}
			if tel.Missing != "" && d.Replicas != clamp(tel.Ready+tel.Starting, minR, maxR) {
				t.Fatalf("missing telemetry changed the count to %d (had %d)", d.Replicas, tel.Ready+tel.Starting)
			}
			if tel.Missing == "" && d.Replicas < min(tel.InFlight, maxR) {
				t.Fatalf("%d replicas for %d in flight", d.Replicas, tel.InFlight)
			}
		}
	})
}

func TestWeightedQuantile(t *testing.T) {
	cases := []struct {
		values   []float64
		q, hl, w float64
	}{
		{[]float64{4, 0, 0, 0}, 0.5, 0.5, 4}, // a short half-life: the newest outweighs the rest
		{[]float64{4, 0, 0, 0}, 0.5, 2, 0},   // a longer one: three older days outweigh it
		{[]float64{0, 4, 4, 4}, 0.5, 100, 4}, // equal weights: the median
		{[]float64{1, 2, 3}, 1, 2, 3},
		{nil, 0.5, 2, 0},
	}
	for _, c := range cases {
		if got := weightedQuantile(c.values, c.q, c.hl); got != c.w {
			t.Errorf("weightedQuantile(%v, %v, %v) = %v, want %v", c.values, c.q, c.hl, got, c.w)
		}
	}
}
