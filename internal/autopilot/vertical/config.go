package vertical

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Config is how one group's tasks are sized. Durations are of the usage
// history (the samples' own clock), not of the wall clock. The zero value
// of every field but MinAllowed and MaxAllowed means its default
// (DefaultConfig); Validate checks the result.
type Config struct {
	// MinAllowed and MaxAllowed bound every recommendation, in the
	// resource's unit (0: no bound). A task that is killed for want of
	// memory while at MaxAllowed is reported, never resized again.
	MinAllowed, MaxAllowed float64

	// SteadyWindow is how far back a steady task's peak is taken (default
	// 2 h); Margin is the share added on top of it (default 2 %).
	SteadyWindow time.Duration
	Margin       float64

	// RiseSpan and RiseWindow measure how fast usage can climb: the
	// largest rise over any RiseSpan (default 3 min) in the last
	// RiseWindow (default 12 h). RiseWeight of it (default 0.7) is added
	// to the limit, so a task that ramps keeps ahead of its ramp.
	RiseSpan, RiseWindow time.Duration
	RiseWeight           float64

	// A task is bursty when its usage jumps by BurstThreshold (default
	// 0.3) of its peak or more and falls back within BurstSpan (default
	// 10 min). Burstiness is remembered with a half-life of BurstHalfLife
	// (default 48 h). A bursty task is sized on its peak over BurstWindow
	// (default 24 h) with a margin of BurstWeight (default 2.5) times its
	// burstiness, at most MaxMargin (default 1, i.e. twice the peak).
	BurstThreshold float64
	BurstSpan      time.Duration
	BurstHalfLife  time.Duration
	BurstWindow    time.Duration
	BurstWeight    float64
	MaxMargin      float64

	// OOMBump is how much a kill for want of the resource raises the
	// limit that was in force (default 20 %); each further kill within
	// OOMMemory (default 7 days) of the previous one doubles the bump.
	// For OOMMemory after a kill the recommendation never falls below the
	// raised limit.
	OOMBump   float64
	OOMMemory time.Duration

	// MinHistory is how much history a task needs before it gets a
	// recommendation (default 20 min).
	MinHistory time.Duration
}

// DefaultConfig is the sizing a group gets when it names nothing.
func DefaultConfig() Config {
	return Config{
		SteadyWindow: 2 * time.Hour, Margin: 0.02,
		RiseSpan: 3 * time.Minute, RiseWindow: 12 * time.Hour, RiseWeight: 0.7,
		BurstThreshold: 0.3, BurstSpan: 10 * time.Minute, BurstHalfLife: 48 * time.Hour,
		BurstWindow: 24 * time.Hour, BurstWeight: 2.5, MaxMargin: 1,
		OOMBump: 0.2, OOMMemory: 7 * 24 * time.Hour,
		MinHistory: 20 * time.Minute,
	}
}

// ErrConfig is wrapped by every error of Validate.
var ErrConfig = errors.New("invalid vertical autoscaling config")

// WithDefaults fills every zero field but the bounds with its default.
func (c Config) WithDefaults() Config {
	d := DefaultConfig()
	durations := []struct{ v, def *time.Duration }{
		{&c.SteadyWindow, &d.SteadyWindow}, {&c.RiseSpan, &d.RiseSpan}, {&c.RiseWindow, &d.RiseWindow},
		{&c.BurstSpan, &d.BurstSpan}, {&c.BurstHalfLife, &d.BurstHalfLife}, {&c.BurstWindow, &d.BurstWindow},
		{&c.OOMMemory, &d.OOMMemory}, {&c.MinHistory, &d.MinHistory},
	}
	for _, f := range durations {
		if *f.v == 0 {
			*f.v = *f.def
		}
	}
	floats := []struct{ v, def *float64 }{
		{&c.Margin, &d.Margin}, {&c.RiseWeight, &d.RiseWeight}, {&c.BurstThreshold, &d.BurstThreshold},
		{&c.BurstWeight, &d.BurstWeight}, {&c.MaxMargin, &d.MaxMargin}, {&c.OOMBump, &d.OOMBump},
	}
	for _, f := range floats {
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
	for _, f := range []struct {
		name string
		v    float64
	}{{"minAllowed", c.MinAllowed}, {"maxAllowed", c.MaxAllowed}, {"margin", c.Margin}, {"riseWeight", c.RiseWeight},
		{"burstThreshold", c.BurstThreshold}, {"burstWeight", c.BurstWeight}, {"maxMargin", c.MaxMargin}, {"oomBump", c.OOMBump}} {
		if f.v < 0 || math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return bad(f.name, "must be a finite number ≥ 0, got %v", f.v)
		}
	}
	if c.MaxAllowed > 0 && c.MinAllowed > c.MaxAllowed {
		return bad("minAllowed", "%v is above maxAllowed %v: lower minAllowed or raise maxAllowed", c.MinAllowed, c.MaxAllowed)
	}
	for _, f := range []struct {
		name string
		v    time.Duration
	}{{"steadyWindow", c.SteadyWindow}, {"riseSpan", c.RiseSpan}, {"riseWindow", c.RiseWindow}, {"burstSpan", c.BurstSpan},
		{"burstHalfLife", c.BurstHalfLife}, {"burstWindow", c.BurstWindow}, {"oomMemory", c.OOMMemory}, {"minHistory", c.MinHistory}} {
		if f.v < time.Second {
			return bad(f.name, "must be at least 1s, got %v", f.v)
		}
	}
	if c.RiseSpan >= c.RiseWindow {
		return bad("riseSpan", "%v must be shorter than riseWindow %v", c.RiseSpan, c.RiseWindow)
	}
	if c.BurstSpan >= c.BurstWindow {
		return bad("burstSpan", "%v must be shorter than burstWindow %v", c.BurstSpan, c.BurstWindow)
	}
	return nil
}
