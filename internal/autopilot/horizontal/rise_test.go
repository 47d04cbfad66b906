package horizontal

import (
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// request of a synthetic workload: when it arrives and how long it runs.
type request struct{ at, exec int64 }

// every makes a request pattern that repeats each period from 0 to end:
// requests at the offsets, each running exec seconds.
func every(period, end, exec int64, offsets ...int64) []request {
	var out []request
	for t := int64(0); t < end; t += period {
		for _, o := range offsets {
			out = append(out, request{t + o, exec})
		}
	}
	return out
}

// replay feeds the autoscaler one decision a sync from `from` up to (not
// including) `to`, as if every request were served the moment it arrived,
// and returns the last decision.
func replay(a *Autoscaler, reqs []request, from, to int64) Decision {
	// Work in flight and arrivals at every second of (from − sync, to).
	start := from - sync + 1
	inFlight := make([]int, to-start)
	arrived := make([]int, to-start)
	for _, r := range reqs {
		for s := max(r.at, start); s < min(r.at+r.exec, to); s++ {
			inFlight[s-start]++
		}
		if r.at >= start && r.at < to {
			arrived[r.at-start]++
		}
	}
	var d Decision
	for now := from; now < to; now += sync {
		t := Telemetry{Now: now, InFlight: inFlight[now-start]}
		for s := now - sync + 1; s <= now; s++ {
			t.PeakInFlight = max(t.PeakInFlight, inFlight[s-start])
			t.Arrivals += arrived[s-start]
		}
		t.Ready = max(t.InFlight, d.Replicas)
		t.BusySeconds, t.ReadySeconds = float64(t.InFlight*sync), float64(t.Ready*sync)
		d = a.Decide(t)
	}
	return d
}

// TestSparesFollowTheRiseOfTheWork: two services with one request arriving
// now and the same rate. On one, a request that arrives is followed within
// 30 s by two more (a user's batch); on the other, requests come alone.
// After two days each autoscaler has learnt its service: the first keeps
// two spares when a request arrives, the second none.
func TestSparesFollowTheRiseOfTheWork(t *testing.T) {
	const day, period = 2 * 86400, 600
	cases := []struct {
		name    string
		offsets []int64
		want    int
		source  string
		explain string
	}{
		{"batches of three", []int64{0, 15, 30}, 3, SourceForecast, "1 in flight + 2 spare for the rise within 1m15s"},
		{"requests alone", []int64{0, 200, 400}, 1, SourceReactive, "the work rose in 0.0% of"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := newAutoscaler(t, nil)
			reqs := every(period, day+period, 120, c.offsets...)
			// Up to the sync that sees the first request of a period.
			d := replay(a, reqs, 0, day+1)
			if d.Replicas != c.want || d.Source != c.source || !strings.Contains(d.Reason, c.explain) {
				t.Fatalf("got %d (%s): %s; want %d (%s) with %q", d.Replicas, d.Source, d.Reason, c.want, c.source, c.explain)
			}
		})
	}
}

// TestScaleInWaitsForTheDelays: a service learnt with one request every
// five minutes sees a burst it did not expect; the count set for the burst
// outlasts it by the scale-in delay, then falls back to what the service
// usually needs.
func TestScaleInWaitsForTheDelays(t *testing.T) {
	const day = 86400
	a := newAutoscaler(t, nil)
	reqs := every(900, day+900, 120, 0, 300, 600)
	reqs = append(reqs, request{day + 130, 20}, request{day + 131, 20}, request{day + 132, 20}, request{day + 133, 20})
	cases := []struct {
		at      int64
		want    int
		source  string
		explain string
	}{
		{day + 135, 4 + 1, SourceReactive, "no moment with 4 in flight seen yet"},
		{day + 165, 5, SourceRecent, "held at 5, decided within the last 1m0s"},
		{day + 225, 4, SourceRecent, "held at the peak of 4 in flight over the last 2m0s"},
		{day + 285, 1, SourceForecast, "0 in flight + 1 spare"},
	}
	from := int64(0)
	for _, c := range cases {
		d := replay(a, reqs, from, c.at+1)
		from = c.at + sync
		if d.Replicas != c.want || d.Source != c.source || !strings.Contains(d.Reason, c.explain) {
			t.Fatalf("%ds after the burst: %d (%s): %s; want %d (%s) with %q", c.at-day-130, d.Replicas, d.Source, d.Reason, c.want, c.source, c.explain)
		}
	}
}

func TestMomentCellsAreDistinct(t *testing.T) {
	seen := map[int32]moment{}
	for in := 0; in <= 7; in++ {
		for mi := 0; mi <= 6; mi += 1 {
			for q := 0; q <= 40; q += 3 {
				for lv := 0; lv <= 4; lv++ {
					m := moment{inFlight: in, lastMinute: mi, lastQuarter: q, level: lv}
					for _, k := range m.cells() {
						if k < 0 || int(k) >= riseCells() {
							t.Fatalf("%v: cell %d outside [0, %d)", m, k, riseCells())
						}
					}
					fine := m.cells()[0]
					if o, ok := seen[fine]; ok && (bucketOf(o.inFlight, inFlightBuckets) != bucketOf(in, inFlightBuckets) ||
						bucketOf(o.lastMinute, lastMinuteBuckets) != bucketOf(mi, lastMinuteBuckets) ||
						bucketOf(o.lastQuarter, lastQuarterBuckets) != bucketOf(q, lastQuarterBuckets) || bucketOf(o.level, levelBuckets) != bucketOf(lv, levelBuckets)) {
						t.Fatalf("%v and %v share cell %d", o, m, fine)
					}
					seen[fine] = m
				}
			}
		}
	}
}

// TestPropertyDeterministic: two autoscalers shown the same telemetry
// decide the same, reasons included (the core keeps no hidden input).
func TestPropertyDeterministic(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg := DefaultConfig()
		cfg.Min, cfg.Max, cfg.ScaleToZero = 0, 12, true
		a, _ := New(cfg)
		b, _ := New(cfg)
		now := int64(rapid.IntRange(0, 86400*7).Draw(t, "start"))
		for i, n := 0, rapid.IntRange(1, 2000).Draw(t, "decisions"); i < n; i++ {
			now += int64(rapid.IntRange(1, 120).Draw(t, "gap"))
			tel := Telemetry{Now: now, Ready: rapid.IntRange(0, 12).Draw(t, "ready"), InFlight: rapid.IntRange(0, 15).Draw(t, "inFlight"),
				Arrivals: rapid.IntRange(0, 6).Draw(t, "arrivals")}
			tel.PeakInFlight = tel.InFlight + rapid.IntRange(0, 3).Draw(t, "peakExtra")
			if rapid.IntRange(0, 20).Draw(t, "startup") == 0 {
				tel.StartupSeconds = []float64{rapid.Float64Range(1, 120).Draw(t, "seconds")}
			}
			if da, db := a.Decide(tel), b.Decide(tel); da != db {
				t.Fatalf("same telemetry, two decisions:\n%+v\n%+v", da, db)
			}
		}
	})
}
