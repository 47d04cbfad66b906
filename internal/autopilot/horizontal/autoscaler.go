package horizontal

import (
	"github.com/strata-dev/strata/internal/autopilot/slots"

	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// startupMemory is how many measured start-ups an autoscaler keeps.
const startupMemory = 64

// Autoscaler decides one group's replica count. It learns the group's
// daily and weekly cycle from the telemetry it is shown, keeps replicas
// warm ahead of the slots the forecast says are busy (allowing for the
// replicas' measured start-up time), lets them go when the forecast says
// the group goes idle (to zero, when allowed), reacts to work the forecast
// missed, and holds when its telemetry is missing or stale.
//
// Its memory is fixed: the seasonal profile (about 32 KiB with the default
// 15-minute slots, 7 days and 3 weeks), 64 start-up times, and one recent
// peak per decision of the last ScaleInDelay. It is soft state: a new
// Autoscaler starts from the reactive rule alone and its forecast fills in
// over the following day. Not safe for concurrent use; it never reads the
// clock.
type Autoscaler struct {
	cfg      Config
	profile  *seasonalProfile
	startups []float64 // ring of measured start-up times
	nextUp   int
	recent   []peakAt
}

type peakAt struct {
	at   int64
	peak int
}

// New makes an autoscaler; cfg is completed with defaults and must
// validate.
func New(cfg Config) (*Autoscaler, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Autoscaler{cfg: cfg, profile: newSeasonalProfile(int64(cfg.Slot/time.Second), cfg.Days, cfg.Weeks)}, nil
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

	d := Decision{Forecast: f.replicas}
	d.Reactive = t.InFlight
	if t.InFlight > 0 {
		d.Reactive += cfg.Spare
	}
	delay := cfg.IdleScaleInDelay
	if f.active {
		delay = cfg.ScaleInDelay
	}
	recent := 0
	for _, p := range a.recent {
		if time.Duration(t.Now-p.at)*time.Second < delay {
			recent = max(recent, p.peak)
		}
	}
	want, src := d.Reactive, SourceReactive
	if recent > want {
		want, src = recent, SourceRecent
	}
	if cfg.Mode == ModeForecast && f.replicas > want {
		want, src = f.replicas, SourceForecast
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
	d.Reason = a.explain(d, t, recent, delay, f, lead)
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

// learn folds a decision's telemetry into the profile, the start-up times
// and the recent peaks.
func (a *Autoscaler) learn(t Telemetry) {
	peak := max(t.PeakInFlight, t.InFlight)
	a.profile.observe(t.Now, peak, t.Arrivals, t.BusySeconds)
	for _, s := range t.StartupSeconds {
		if len(a.startups) < startupMemory {
			a.startups = append(a.startups, s)
		} else {
			a.startups[a.nextUp] = s
		}
		a.nextUp = (a.nextUp + 1) % startupMemory
	}
	keep := a.recent[:0]
	for _, p := range a.recent {
		if time.Duration(t.Now-p.at)*time.Second < max(a.cfg.ScaleInDelay, a.cfg.IdleScaleInDelay) {
			keep = append(keep, p)
		}
	}
	a.recent = append(keep, peakAt{at: t.Now, peak: peak})
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

func (a *Autoscaler) explain(d Decision, t Telemetry, recent int, delay time.Duration, f forecastAhead, lead time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d replicas (%s): ", d.Replicas, d.Source)
	var parts []string
	if f.days > 0 {
		state := "idle"
		if f.active {
			state = "busy"
		}
		fc := fmt.Sprintf("forecast %s for the next %v (start-up allowed for): %.1f arrivals and %.2f in flight a slot, p%.0f of %d day(s)",
			state, lead.Round(time.Second), f.arrivals, f.load, 100*a.cfg.Quantile, f.days)
		if f.weeks > 0 {
			fc += fmt.Sprintf(" and %d week(s)", f.weeks)
		}
		fc += fmt.Sprintf(" → %d", f.replicas)
		if a.cfg.Mode == ModeForecastOnly {
			fc += " [forecast-only: not acted on]"
		}
		parts = append(parts, fc)
	} else {
		parts = append(parts, "no forecast yet (under a day of history)")
	}
	parts = append(parts, fmt.Sprintf("%d in flight, %d waiting", t.InFlight, t.Waiting))
	if recent > 0 {
		parts = append(parts, fmt.Sprintf("peak %d in the last %v", recent, delay))
	}
	b.WriteString(strings.Join(parts, "; "))
	return b.String()
}

func clamp(v, lo, hi int) int { return max(lo, min(hi, v)) }
