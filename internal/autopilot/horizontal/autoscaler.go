package horizontal

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/strata-dev/strata/internal/autopilot/slots"
)

// startupMemory is how many measured start-ups an autoscaler keeps.
const startupMemory = 64

// Autoscaler decides one group's replica count. It learns the group's
// daily and weekly cycle and how far its work rises within a start-up time
// from the telemetry it is shown; it keeps as many replicas as the work in
// flight plus the spares that rise calls for, scales in when the rise it
// expects falls (to zero, when allowed and the chance of a request within
// a start-up time is below the risk), and holds when its telemetry is
// missing or stale.
//
// Its memory is fixed: the seasonal profile (about 32 KiB with the default
// 15-minute slots, 7 days and 3 weeks), the rise model (about 48 KiB), 64
// start-up times, and a few numbers per decision of the last quarter of an
// hour. It is soft state: a new Autoscaler starts from the reactive rule
// (the work in flight plus one spare) and learns again over the following
// hours (the rise) and day (the forecast). Not safe for concurrent use; it
// never reads the clock.
type Autoscaler struct {
	cfg      Config
	profile  *seasonalProfile
	rise     *riseModel
	startups []float64 // ring of measured start-up times
	nextUp   int
	arrivals []countAt // arrivals per decision, the last quarter of an hour
	peaks    []countAt // peak work in flight per decision, the last ScaleInDelay
	targets  []countAt // counts decided before the delays, the last Settle
}

type countAt struct {
	at    int64
	count int
}

// New makes an autoscaler; cfg is completed with defaults and must
// validate.
func New(cfg Config) (*Autoscaler, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Autoscaler{cfg: cfg, profile: newSeasonalProfile(int64(cfg.Slot/time.Second), cfg.Days, cfg.Weeks),
		rise: newRiseModel(cfg.LearnHalfLife.Seconds())}, nil
}

// Config is the autoscaler's configuration, defaults filled in.
func (a *Autoscaler) Config() Config { return a.cfg }

// Name is the autoscaler's row name in the simulator.
func (a *Autoscaler) Name() string { return "strata" }

// Decide returns the replica count for the group now, and why.
func (a *Autoscaler) Decide(t Telemetry) Decision {
	cfg := a.cfg
	if why := a.stale(t); why != "" {
		n := clamp(t.Ready+t.Starting, cfg.Min, cfg.Max)
		return Decision{Replicas: n, Source: SourceHold, Held: true, Reason: fmt.Sprintf("%d replicas (hold): %s", n, why)}
	}
	a.learn(t)
	lead := a.startupLead() + cfg.Sync
	f := a.forecast(t.Now, lead)
	m := moment{inFlight: t.InFlight, lastMinute: a.arrivedWithin(t.Now, 60), lastQuarter: a.arrivedWithin(t.Now, 900), level: f.replicas}
	a.rise.expect(m, t.Now+int64(lead/time.Second))
	sp := a.rise.spares(m, cfg.Risk, t.Now)

	d := Decision{Forecast: t.InFlight + sp.replicas, Reactive: t.InFlight}
	if t.InFlight > 0 {
		d.Reactive += cfg.Spare
	}
	want, src := d.Forecast, SourceForecast
	if sp.replicas == 0 || sp.prior {
		src = SourceReactive
	}
	if cfg.Mode == ModeForecastOnly {
		want, src = d.Reactive, SourceReactive
	}
	// The delays before a scale-in: the peak work in flight of the last
	// ScaleInDelay, and any count decided within the last Settle.
	peak := highest(a.peaks, t.Now, cfg.ScaleInDelay)
	settled := highest(a.targets, t.Now, cfg.Settle)
	a.targets = remember(a.targets, countAt{t.Now, want}, t.Now, cfg.Settle)
	held := ""
	if peak > want {
		want, src, held = peak, SourceRecent, fmt.Sprintf("held at the peak of %d in flight over the last %v", peak, cfg.ScaleInDelay)
	}
	if settled > want {
		want, src, held = settled, SourceRecent, fmt.Sprintf("held at %d, decided within the last %v", settled, cfg.Settle)
	}
	if want == 0 {
		src = SourceIdle
		if !cfg.ScaleToZero {
			want, src = 1, SourceBounds
		}
	}
	d.Replicas = clamp(want, cfg.Min, cfg.Max)
	if d.Replicas != want {
		src = SourceBounds
	}
	d.Source = src
	d.Reason = a.explain(d, t, m, sp, f, lead, held)
	return d
}

// stale says why the telemetry cannot be used, or "".
func (a *Autoscaler) stale(t Telemetry) string {
	switch {
	case t.Missing != "":
		return "telemetry missing: " + t.Missing
	case time.Duration(t.Age)*time.Second > a.cfg.MaxTelemetryAge:
		return fmt.Sprintf("telemetry %ds old (more than %v): nothing is scaled on stale data", t.Age, a.cfg.MaxTelemetryAge)
	}
	return ""
}

// learn folds a decision's telemetry into the profile, the rise model, the
// start-up times, the recent arrivals and the recent peaks.
func (a *Autoscaler) learn(t Telemetry) {
	peak := max(t.PeakInFlight, t.InFlight)
	a.profile.observe(t.Now, peak, t.Arrivals, t.BusySeconds)
	a.rise.observe(t.Now, peak)
	for _, s := range t.StartupSeconds {
		if len(a.startups) < startupMemory {
			a.startups = append(a.startups, s)
		} else {
			a.startups[a.nextUp] = s
		}
		a.nextUp = (a.nextUp + 1) % startupMemory
	}
	a.arrivals = remember(a.arrivals, countAt{t.Now, t.Arrivals}, t.Now, quarterHour)
	a.peaks = remember(a.peaks, countAt{t.Now, peak}, t.Now, a.cfg.ScaleInDelay)
}

// quarterHour is the longest span of arrivals a moment counts.
const quarterHour = 15 * time.Minute

// remember appends c to the counts and forgets those older than span.
func remember(counts []countAt, c countAt, now int64, span time.Duration) []countAt {
	keep := counts[:0]
	for _, x := range counts {
		if time.Duration(now-x.at)*time.Second < span {
			keep = append(keep, x)
		}
	}
	return append(keep, c)
}

// highest is the largest count of the last span.
func highest(counts []countAt, now int64, span time.Duration) int {
	h := 0
	for _, x := range counts {
		if time.Duration(now-x.at)*time.Second < span {
			h = max(h, x.count)
		}
	}
	return h
}

// arrivedWithin counts the arrivals of the decisions of the last seconds.
func (a *Autoscaler) arrivedWithin(now, seconds int64) int {
	n := 0
	for _, x := range a.arrivals {
		if now-x.at < seconds {
			n += x.count
		}
	}
	return n
}

// startupLead is the start-up time the autoscaler allows for: the
// configured quantile of the measured start-ups, or the prior before any.
func (a *Autoscaler) startupLead() time.Duration {
	if len(a.startups) == 0 {
		return a.cfg.StartupPrior
	}
	s := append([]float64(nil), a.startups...)
	sort.Float64s(s)
	k := int(math.Ceil(a.cfg.StartupQuantile*float64(len(s)))) - 1
	return time.Duration(s[max(0, k)] * float64(time.Second))
}

// forecastAhead is what the forecast asks for from now to now + lead.
type forecastAhead struct {
	replicas int     // ⌈expected work in flight⌉, at least 1 in an active slot
	active   bool    // some slot of the span expects ActiveArrivals or more
	load     float64 // the expected work in flight of the busiest slot
	arrivals float64 // the expected arrivals of the busiest slot
	days     int     // days of history behind it
	weeks    int     // weeks of history behind it
}

// forecast looks at every slot from now to now + lead: a replica started
// now is ready by then, so whatever those slots need must start now.
func (a *Autoscaler) forecast(now int64, lead time.Duration) forecastAhead {
	cfg := a.cfg
	slot := int64(cfg.Slot / time.Second)
	end := now + int64(lead/time.Second)
	var out forecastAhead
	for s := slots.Of(now, slot); s <= slots.Of(end, slot); s++ {
		load := a.profile.forecast(s*slot, cfg.Quantile, cfg.DayHalfLife, cfg.WeeklyWeight, statLoad)
		arr := a.profile.forecast(s*slot, cfg.Quantile, cfg.DayHalfLife, cfg.WeeklyWeight, statArrivals)
		out.days, out.weeks = max(out.days, load.days), max(out.weeks, load.weeks)
		n := int(math.Ceil(load.value - 1e-9))
		if arr.value >= cfg.ActiveArrivals {
			out.active = true
			n = max(n, 1)
		}
		if n > out.replicas || load.value > out.load {
			out.replicas, out.load = max(out.replicas, n), math.Max(out.load, load.value)
		}
		out.arrivals = math.Max(out.arrivals, arr.value)
	}
	return out
}

func (a *Autoscaler) explain(d Decision, t Telemetry, m moment, sp spares, f forecastAhead, lead time.Duration, held string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d replicas (%s): ", d.Replicas, d.Source)
	rise := fmt.Sprintf("%d in flight + %d spare for the rise within %v (start-up allowed for): ", t.InFlight, sp.replicas, lead.Round(time.Second))
	switch {
	case sp.prior:
		rise += fmt.Sprintf("no moment with %d in flight seen yet, so the reactive rule's belief: a rise of one", t.InFlight)
	case sp.replicas == 0:
		rise += fmt.Sprintf("the work rose in %.1f%% of %.0f moments like this", 100*sp.exceeded, sp.seen)
	default:
		rise += fmt.Sprintf("it rose by more than %d in %.1f%% of %.0f moments like this, by more than %d in %.1f%%", sp.replicas, 100*sp.exceeded, sp.seen, sp.replicas-1, 100*sp.below)
	}
	rise += fmt.Sprintf(" (risk %.0f%%)", 100*a.cfg.Risk)
	if a.cfg.Mode == ModeForecastOnly {
		rise = fmt.Sprintf("%d in flight + %d spare (reactive); the forecast would set %d: ", t.InFlight, d.Reactive-t.InFlight, d.Forecast) + rise + " [forecast-only: not acted on]"
	}
	parts := []string{rise, fmt.Sprintf("%d arrival(s) in the last minute, %d in 15 min", m.lastMinute, m.lastQuarter)}
	if f.days > 0 {
		state := "idle"
		if f.active {
			state = "busy"
		}
		fc := fmt.Sprintf("forecast %s: %.1f arrivals and %.2f in flight a slot, p%.0f of %d day(s)", state, f.arrivals, f.load, 100*a.cfg.Quantile, f.days)
		if f.weeks > 0 {
			fc += fmt.Sprintf(" and %d week(s)", f.weeks)
		}
		parts = append(parts, fc)
	} else {
		parts = append(parts, "no forecast yet (under a day of history)")
	}
	if held != "" {
		parts = append(parts, held)
	}
	parts = append(parts, fmt.Sprintf("%d waiting", t.Waiting))
	b.WriteString(strings.Join(parts, "; "))
	return b.String()
}

func clamp(v, lo, hi int) int { return max(lo, min(hi, v)) }
