package vertical

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Sample is one observation of a task's use of one resource.
type Sample struct {
	Time  int64   // seconds, on the clock of the history
	Usage float64 // in the resource's unit (bytes, milli-CPU, a fraction)
	// OOMKilled says the task was killed for want of the resource since
	// the previous sample; Limit is the limit that was in force then.
	OOMKilled bool
	Limit     float64
}

// ErrOutOfOrder is returned by Observe for a sample older than one already
// seen: history is append-only.
var ErrOutOfOrder = errors.New("sample older than the task's latest")

// Bucket counts of the windows: they bound a task's memory whatever the
// sampling rate (see Task).
const (
	steadyBuckets = 24
	longBuckets   = 48
	riseBuckets   = 24
	spanBuckets   = 6
	burstBuckets  = 10
)

// Task is the sizing state of one task for one resource: its usage history,
// downsampled into fixed windows, its burstiness and the kills it suffered.
// Its memory is fixed: about 2 KiB (five windows of 6 to 48 buckets and a
// handful of scalars), whatever the sampling rate or the task's age. It is
// soft state: losing it loses only what it learnt, and a new Task warms up
// again from the next MinHistory of samples.
//
// A Task is not safe for concurrent use; it never reads the clock (every
// time comes with a sample or a call).
type Task struct {
	cfg   Config
	first int64
	last  int64
	seen  bool

	steady    *windowExtreme // peak over SteadyWindow
	long      *windowExtreme // peak over BurstWindow
	recentMin *windowExtreme // lowest over RiseSpan, before the sample
	rises     *windowExtreme // largest rise over RiseSpan, over RiseWindow
	burst     *burstMeter

	ooms     int   // kills seen, ever
	streak   int   // kills each within OOMMemory of the previous
	lastOOM  int64 // time of the latest kill
	oomFloor float64
	oomAtMax int     // kills while the limit in force was MaxAllowed
	killedAt float64 // the limit of the latest kill
	lastBump float64 // the bump it got
}

// NewTask starts the state of one task. cfg is completed with defaults and
// must validate.
func NewTask(cfg Config) (*Task, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	sec := func(d time.Duration) int64 { return int64(d / time.Second) }
	return &Task{
		cfg:       cfg,
		steady:    newWindowMax(sec(cfg.SteadyWindow), steadyBuckets),
		long:      newWindowMax(sec(cfg.BurstWindow), longBuckets),
		recentMin: newWindowMin(sec(cfg.RiseSpan), spanBuckets),
		rises:     newWindowMax(sec(cfg.RiseWindow), riseBuckets),
		burst:     newBurstMeter(sec(cfg.BurstSpan), sec(cfg.BurstHalfLife), burstBuckets),
	}, nil
}

// Config is the task's sizing configuration, defaults filled in.
func (t *Task) Config() Config { return t.cfg }

// Observe adds one sample to the history. A kill raises the floor of every
// later recommendation at once (see Config.OOMBump).
func (t *Task) Observe(s Sample) error {
	if t.seen && s.Time < t.last {
		return fmt.Errorf("%w: %d < %d", ErrOutOfOrder, s.Time, t.last)
	}
	if s.Usage < 0 || math.IsNaN(s.Usage) || math.IsInf(s.Usage, 0) {
		return fmt.Errorf("usage: want a finite number ≥ 0, got %v", s.Usage)
	}
	if !t.seen {
		t.first, t.seen = s.Time, true
	}
	t.last = s.Time
	if s.OOMKilled {
		t.observeKill(s)
	}
	if low, ok := t.recentMin.get(s.Time); ok {
		t.rises.add(s.Time, math.Max(0, s.Usage-low))
	}
	t.recentMin.add(s.Time, s.Usage)
	t.steady.add(s.Time, s.Usage)
	t.long.add(s.Time, s.Usage)
	peak, _ := t.steady.get(s.Time)
	t.burst.add(s.Time, s.Usage, peak)
	return nil
}

// observeKill raises the floor above the limit the task was killed at, by
// a bump that doubles with every kill that follows another within
// OOMMemory: a limit that keeps killing grows geometrically, never in a
// loop of the same size.
func (t *Task) observeKill(s Sample) {
	if t.ooms > 0 && s.Time-t.lastOOM <= int64(t.cfg.OOMMemory/time.Second) {
		t.streak++
	} else {
		t.streak = 1
	}
	t.ooms++
	t.lastOOM = s.Time
	at := math.Max(s.Limit, s.Usage)
	bump := t.cfg.OOMBump * math.Exp2(float64(t.streak-1))
	t.oomFloor = math.Max(t.oomFloor, at*(1+bump))
	t.killedAt, t.lastBump = at, bump
	if t.cfg.MaxAllowed > 0 && s.Limit >= t.cfg.MaxAllowed {
		t.oomAtMax++
	}
}

// Recommend is the limit the task should have at time now (normally the
// time of its latest sample), with the reason. Before MinHistory of samples
// it returns a Recommendation with Ready false and says how much is missing.
func (t *Task) Recommend(now int64) Recommendation {
	cfg := t.cfg
	have := time.Duration(t.last-t.first) * time.Second
	if !t.seen || have < cfg.MinHistory {
		return Recommendation{Model: ModelWarmingUp, OOMs: t.ooms,
			Reason: fmt.Sprintf("warming up: %v of the %v of history a recommendation needs", have, cfg.MinHistory)}
	}
	// The windows end at the newest sample: a gap in the telemetry does
	// not empty them (the caller decides what a gap means), while
	// burstiness keeps decaying with time.
	r := Recommendation{Ready: true, OOMs: t.ooms, Burstiness: t.burst.get(now)}
	if rise, ok := t.rises.get(t.last); ok {
		r.Rise = rise // none measured yet when samples are further apart than RiseSpan
	}
	if r.Burstiness >= cfg.BurstThreshold {
		r.Model, r.Window = ModelBursty, cfg.BurstWindow
		r.Peak, _ = t.long.get(t.last)
		r.Margin = math.Min(cfg.MaxMargin, cfg.BurstWeight*r.Burstiness)
	} else {
		r.Model, r.Window = ModelSteady, cfg.SteadyWindow
		r.Peak, _ = t.steady.get(t.last)
		r.Margin = cfg.Margin
	}
	r.Limit = r.Peak*(1+r.Margin) + cfg.RiseWeight*r.Rise
	if t.ooms > 0 && now-t.lastOOM <= int64(cfg.OOMMemory/time.Second) && t.oomFloor > r.Limit {
		r.Limit, r.Model = t.oomFloor, ModelAfterOOM
		r.KilledAt, r.Bump = t.killedAt, t.lastBump
	}
	if cfg.MinAllowed > 0 && r.Limit < cfg.MinAllowed {
		r.Limit, r.Bound = cfg.MinAllowed, BoundMin
	}
	if cfg.MaxAllowed > 0 && r.Limit > cfg.MaxAllowed {
		r.Limit, r.Bound = cfg.MaxAllowed, BoundMax
	}
	r.KilledAtMax = t.oomAtMax
	r.Reason = r.explain(cfg)
	return r
}
