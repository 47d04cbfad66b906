package horizontal

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Modes of the autoscaler.
const (
	// ModeForecast scales ahead of the forecast and reacts to what it
	// missed (the default).
	ModeForecast = "forecast"
	// ModeForecastOnly acts on the reactive rule alone and reports what
	// the forecast would have set (Decision.Forecast): a group can watch
	// the forecast before trusting it.
	ModeForecastOnly = "forecast-only"
)

// Config is how one group is scaled. The zero value of every field but
// Min, Max, Mode and ScaleToZero means its default (DefaultConfig).
type Config struct {
	// Min and Max bound every decision (Max also by the namespace's
	// quota, which the caller folds in).
	Min, Max int
	Mode     string
	// ScaleToZero lets the group go to zero replicas (Min must be 0) in
	// slots the forecast says are idle, once nothing is in flight.
	ScaleToZero bool

	// Sync is the time between decisions (default 15 s).
	Sync time.Duration
	// Slot is the forecast's resolution (default 15 min); Days and Weeks
	// how many past days and weeks each slot remembers (defaults 7 and 3).
	Slot        time.Duration
	Days, Weeks int
	// Quantile of the slot's past peaks the forecast provides for
	// (default 0.5), the days weighted with a half-life of DayHalfLife
	// days (default 2); WeeklyWeight is the share of the same slot of
	// past weeks in the forecast once there are any (default 0.5).
	Quantile     float64
	DayHalfLife  float64
	WeeklyWeight float64

	// ActiveArrivals: a slot whose forecast arrivals reach this many is
	// busy (default 3): its forecast level is at least one replica.
	ActiveArrivals float64

	// Risk is the share of past moments like the present one in which the
	// work in flight rose, within a start-up time, above the spares kept
	// (default 0.06): the fewest spares with at most this share are kept.
	// Lower buys fewer waits for more replica-hours.
	Risk float64
	// LearnHalfLife is the half-life of those moments' weight (default 3
	// days): older moments count less, so the spares follow the workload.
	LearnHalfLife time.Duration

	// Spare replicas are kept above the work in flight by the reactive
	// rule, which forecast-only mode acts on (default 1).
	Spare int
	// ScaleInDelay: a scale-in never goes below the highest work in flight
	// of this last span (default 2 min), so a busy spell's level outlasts
	// its short lulls; Settle: nor below any count decided within this
	// last span (default 1 min), so the count does not churn from one sync
	// to the next (each start costs a start-up of replica time).
	ScaleInDelay, Settle time.Duration

	// StartupPrior is the start-up time assumed before any replica of
	// the group was seen starting (default 60 s); StartupQuantile of the
	// measured start-ups is allowed for after that (default 0.9).
	StartupPrior    time.Duration
	StartupQuantile float64

	// MaxTelemetryAge: demand older than this makes the autoscaler hold
	// (default 3 × Sync).
	MaxTelemetryAge time.Duration
}

// DefaultConfig is what a group gets when it names nothing but its bounds.
func DefaultConfig() Config {
	return Config{Mode: ModeForecast, Sync: 15 * time.Second, Slot: 15 * time.Minute, Days: 7, Weeks: 3,
		Quantile: 0.5, DayHalfLife: 2, WeeklyWeight: 0.5, ActiveArrivals: 3,
		Risk: 0.06, LearnHalfLife: 72 * time.Hour, Spare: 1,
		ScaleInDelay: 2 * time.Minute, Settle: time.Minute,
		StartupPrior: 60 * time.Second, StartupQuantile: 0.9}
}

// ErrConfig is wrapped by every error of Validate.
var ErrConfig = errors.New("invalid horizontal autoscaling config")

// WithDefaults fills the zero fields with their defaults.
func (c Config) WithDefaults() Config {
	d := DefaultConfig()
	if c.Mode == "" {
		c.Mode = d.Mode
	}
	for _, f := range []struct{ v, def *time.Duration }{{&c.Sync, &d.Sync}, {&c.Slot, &d.Slot},
		{&c.ScaleInDelay, &d.ScaleInDelay}, {&c.Settle, &d.Settle}, {&c.LearnHalfLife, &d.LearnHalfLife}, {&c.StartupPrior, &d.StartupPrior}} {
		if *f.v == 0 {
			*f.v = *f.def
		}
	}
	if c.MaxTelemetryAge == 0 {
		c.MaxTelemetryAge = 3 * c.Sync
	}
	for _, f := range []struct{ v, def *int }{{&c.Days, &d.Days}, {&c.Weeks, &d.Weeks}} {
		if *f.v == 0 {
			*f.v = *f.def
		}
	}
	for _, f := range []struct{ v, def *float64 }{{&c.Quantile, &d.Quantile}, {&c.DayHalfLife, &d.DayHalfLife},
		{&c.WeeklyWeight, &d.WeeklyWeight}, {&c.StartupQuantile, &d.StartupQuantile}, {&c.ActiveArrivals, &d.ActiveArrivals}, {&c.Risk, &d.Risk}} {
		if *f.v == 0 {
			*f.v = *f.def
		}
	}
	return c
}

// Validate reports the first field that cannot work, naming it and the fix.
func (c Config) Validate() error {
	bad := func(field, format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrConfig, field, fmt.Sprintf(format, args...))
	}
	switch {
	case c.Min < 0:
		return bad("min", "must be ≥ 0, got %d", c.Min)
	case c.Max < 1:
		return bad("max", "must be ≥ 1, got %d", c.Max)
	case c.Min > c.Max:
		return bad("min", "%d is above max %d: lower min or raise max", c.Min, c.Max)
	case c.ScaleToZero && c.Min > 0:
		return bad("scaleToZero", "needs min 0, got min %d", c.Min)
	case c.Mode != ModeForecast && c.Mode != ModeForecastOnly:
		return bad("mode", "unknown %q (want %s or %s)", c.Mode, ModeForecast, ModeForecastOnly)
	case c.Sync < time.Second:
		return bad("sync", "must be at least 1s, got %v", c.Sync)
	case c.Slot < time.Minute || (24*time.Hour)%c.Slot != 0:
		return bad("slot", "must be at least 1m and divide a day, got %v", c.Slot)
	case c.Days < 1 || c.Days > 60:
		return bad("days", "want 1 to 60, got %d", c.Days)
	case c.Weeks < 1 || c.Weeks > 12:
		return bad("weeks", "want 1 to 12, got %d", c.Weeks)
	case c.Spare < 0:
		return bad("spare", "must be ≥ 0, got %d", c.Spare)
	case c.ScaleInDelay < 0:
		return bad("scaleInDelay", "must be ≥ 0, got %v", c.ScaleInDelay)
	case c.Settle < 0:
		return bad("settle", "must be ≥ 0, got %v", c.Settle)
	case c.LearnHalfLife < time.Minute:
		return bad("learnHalfLife", "must be at least 1m, got %v", c.LearnHalfLife)
	case c.ActiveArrivals < 0:
		return bad("activeArrivals", "must be ≥ 0, got %v", c.ActiveArrivals)
	case c.StartupPrior < 0:
		return bad("startupPrior", "must be ≥ 0, got %v", c.StartupPrior)
	case c.MaxTelemetryAge < c.Sync:
		return bad("maxTelemetryAge", "%v is shorter than sync %v", c.MaxTelemetryAge, c.Sync)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"quantile", c.Quantile}, {"weeklyWeight", c.WeeklyWeight}, {"startupQuantile", c.StartupQuantile}, {"risk", c.Risk}} {
		if !(f.v > 0 && f.v <= 1) {
			return bad(f.name, "want a share in (0, 1], got %v", f.v)
		}
	}
	if !(c.DayHalfLife > 0) || math.IsInf(c.DayHalfLife, 0) {
		return bad("dayHalfLife", "want a positive number of days, got %v", c.DayHalfLife)
	}
	return nil
}
