package gpushare

import (
	"errors"
	"fmt"
	"math"
	"sort"
)

// Config of a recommendation. The zero value of a field means its default.
type Config struct {
	// Quantile of the duty cycle sized for (default 0.95).
	Quantile float64
	// Margin added to it (default 0.2: 20 % above the quantile).
	Margin float64
	// Step the share is rounded up to, in milli (default 50).
	Step int64
	// MinMilli and MaxMilli bound the share (defaults 100 and 1000: a
	// task never gets less than a tenth of a GPU nor more than one).
	MinMilli, MaxMilli int64
	// MinSamples is the fewest samples a recommendation needs (default
	// 60: an hour of one-minute samples).
	MinSamples int
}

// DefaultConfig is the sizing a task gets when its group names nothing.
func DefaultConfig() Config {
	return Config{Quantile: 0.95, Margin: 0.2, Step: 50, MinMilli: 100, MaxMilli: 1000, MinSamples: 60}
}

// ErrConfig is wrapped by every error of Validate.
var ErrConfig = errors.New("invalid gpu share config")

// WithDefaults fills the zero fields.
func (c Config) WithDefaults() Config {
	d := DefaultConfig()
	if c.Quantile == 0 {
		c.Quantile = d.Quantile
	}
	if c.Margin == 0 {
		c.Margin = d.Margin
	}
	if c.Step == 0 {
		c.Step = d.Step
	}
	if c.MinMilli == 0 {
		c.MinMilli = d.MinMilli
	}
	if c.MaxMilli == 0 {
		c.MaxMilli = d.MaxMilli
	}
	if c.MinSamples == 0 {
		c.MinSamples = d.MinSamples
	}
	return c
}

// Validate names the first field that cannot work and the fix.
func (c Config) Validate() error {
	bad := func(field, format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrConfig, field, fmt.Sprintf(format, args...))
	}
	switch {
	case !(c.Quantile > 0 && c.Quantile <= 1):
		return bad("quantile", "want a share in (0, 1], got %v", c.Quantile)
	case c.Margin < 0 || math.IsNaN(c.Margin):
		return bad("margin", "must be ≥ 0, got %v", c.Margin)
	case c.Step < 1 || c.Step > 1000:
		return bad("step", "want 1 to 1000 milli, got %d", c.Step)
	case c.MinMilli < 1 || c.MaxMilli > 1000 || c.MinMilli > c.MaxMilli:
		return bad("minMilli", "want 1 ≤ minMilli ≤ maxMilli ≤ 1000, got %d and %d", c.MinMilli, c.MaxMilli)
	case c.MinSamples < 1:
		return bad("minSamples", "must be ≥ 1, got %d", c.MinSamples)
	}
	return nil
}

// Recommendation is a GPU share and why.
type Recommendation struct {
	Ready   bool    `json:"ready"`
	Milli   int64   `json:"milli"`
	Duty    float64 `json:"duty"` // the duty cycle's quantile, a share of time (0..1)
	Samples int     `json:"samples"`
	Bound   string  `json:"bound,omitempty"` // "minMilli" or "maxMilli" when held there
	Reason  string  `json:"reason"`
}

// Recommend sizes a task from its duty-cycle samples, each a share of time
// in 0..1 (a percentage is the caller's to divide by 100).
func Recommend(cfg Config, duty []float64) (Recommendation, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return Recommendation{}, err
	}
	r := Recommendation{Samples: len(duty)}
	if len(duty) < cfg.MinSamples {
		r.Reason = fmt.Sprintf("warming up: %d of the %d duty-cycle samples a recommendation needs", len(duty), cfg.MinSamples)
		return r, nil
	}
	s := make([]float64, 0, len(duty))
	for _, v := range duty {
		if v < 0 || v > 1 || math.IsNaN(v) {
			return Recommendation{}, fmt.Errorf("duty cycle: want a share of time in [0, 1], got %v (a percentage must be divided by 100)", v)
		}
		s = append(s, v)
	}
	sort.Float64s(s)
	r.Duty = s[max(0, int(math.Ceil(cfg.Quantile*float64(len(s))))-1)]
	raw := r.Duty * (1 + cfg.Margin) * 1000
	milli := int64(math.Ceil(raw/float64(cfg.Step)-1e-9)) * cfg.Step
	r.Milli = milli
	switch {
	case milli < cfg.MinMilli:
		r.Milli, r.Bound = cfg.MinMilli, "minMilli"
	case milli > cfg.MaxMilli:
		r.Milli, r.Bound = cfg.MaxMilli, "maxMilli"
	}
	r.Ready = true
	r.Reason = fmt.Sprintf("p%.0f duty cycle %.1f%% of %d samples + %.0f%%, rounded up to %d milli",
		100*cfg.Quantile, 100*r.Duty, len(s), 100*cfg.Margin, cfg.Step)
	if r.Bound != "" {
		r.Reason += fmt.Sprintf("; held at %s %d", r.Bound, r.Milli)
	}
	r.Reason += fmt.Sprintf(": %d milli", r.Milli)
	return r, nil
}
