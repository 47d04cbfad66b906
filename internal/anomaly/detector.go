package anomaly

import (
	"math"
	"time"
)

// Transform stabilises a signal's variance before it is judged.
type Transform int

const (
	// Identity judges the values as they are.
	Identity Transform = iota
	// Log judges ln(x + Offset): latencies, whose noise grows with them.
	Log
	// Sqrt judges √x: counts (Poisson noise grows with √λ).
	Sqrt
)

// Config tunes one detector; zero fields take the defaults of WithDefaults.
type Config struct {
	Transform Transform
	// Offset is added before Log, so that zeros are finite (default: 1e-4).
	Offset float64
	// Window is how many normal samples the baseline keeps (120: 20 min
	// at one sample per 10 s).
	Window int
	// MinSamples is how many samples the baseline needs before it judges (30).
	MinSamples int
	// Drift (k) is the deviation, in robust standard deviations, that the
	// CUSUM tolerates per sample (1): shifts of more than twice it are
	// found within (Threshold+1.2)/(shift−Drift) samples.
	Drift float64
	// Threshold (h) is the CUSUM level that raises an alarm (8).
	Threshold float64
	// Clip bounds one sample's standardised deviation (3.5), so that one
	// spike, however high, never raises an alarm alone: it takes
	// Threshold/(Clip−Drift) samples in a row.
	Clip float64
	// MinScale floors the baseline's scale in transformed units, so that a
	// signal that never moves (a backlog of 0) does not alarm on its first
	// wiggles: 0.05 for Log (5 %), 0.7 for Sqrt (a count of 1 over a
	// normal of 0 is 1.4 scales: runs of ones are Poisson noise of a rate
	// near 0.3, and a floor of 0.5 alarmed on them 0.46 times per 1000
	// samples), else 1e-9.
	MinScale float64
	// Relearn is how many samples an alarm may last before its level is
	// accepted as the new normal (Window).
	Relearn int
}

// WithDefaults returns c with its zero fields defaulted.
func (c Config) WithDefaults() Config {
	orDefault(&c.Offset, 1e-4)
	orDefault(&c.Window, 120)
	orDefault(&c.MinSamples, 30)
	c.MinSamples = min(c.MinSamples, c.Window)
	orDefault(&c.Drift, 1)
	orDefault(&c.Threshold, 8)
	orDefault(&c.Clip, 3.5)
	if c.MinScale <= 0 {
		switch c.Transform {
		case Log:
			c.MinScale = 0.05
		case Sqrt:
			c.MinScale = 0.7
		default:
			c.MinScale = 1e-9
		}
	}
	orDefault(&c.Relearn, c.Window)
	return c
}

func (c Config) apply(x float64) float64 {
	switch c.Transform {
	case Log:
		return math.Log(math.Max(x, 0) + c.Offset)
	case Sqrt:
		return math.Sqrt(math.Max(x, 0))
	}
	return x
}

func (c Config) invert(y float64) float64 {
	switch c.Transform {
	case Log:
		return math.Exp(y) - c.Offset
	case Sqrt:
		return y * y
	}
	return y
}

// Change is what a sample changed.
type Change int

const (
	// Steady: the alarm state is as it was.
	Steady Change = iota
	// Raised: the signal left its normal with this sample.
	Raised
	// Cleared: the signal came back to its normal.
	Cleared
	// Relearned: the alarm lasted Relearn samples; its level is the new
	// normal and the alarm ends.
	Relearned
)

// Verdict is a detector's judgement of one sample.
type Verdict struct {
	Change Change
	// Alarm is the state after the sample.
	Alarm bool
	// Since is when the current alarm was raised (zero when none).
	Since time.Time
	// Value is the sample; Baseline the median it was judged against, in
	// the signal's own units; Z its deviation in robust standard
	// deviations (0 while warming up); Score the CUSUM after it.
	Value, Baseline, Z, Score float64
	// Warming: the baseline has fewer than MinSamples samples; no
	// judgement was made.
	Warming bool
}

// Detector judges one signal's samples, one at a time.
type Detector struct {
	cfg      Config
	baseline *window // transformed normal samples
	score    float64
	alarm    bool
	since    time.Time
	inAlarm  []float64 // transformed samples since the alarm was raised, up to Relearn
}

// NewDetector returns a detector with an empty baseline.
func NewDetector(c Config) *Detector {
	c = c.WithDefaults()
	return &Detector{cfg: c, baseline: newWindow(c.Window)}
}

// Observe judges one sample taken at t.
func (d *Detector) Observe(t time.Time, x float64) Verdict {
	y := d.cfg.apply(x)
	if math.IsNaN(y) || math.IsInf(y, 0) {
		return Verdict{Alarm: d.alarm, Since: d.since, Value: x, Score: d.score}
	}
	if d.baseline.len() < d.cfg.MinSamples {
		d.baseline.add(y)
		return Verdict{Value: x, Warming: true, Baseline: d.cfg.invert(d.baseline.median())}
	}
	median, scale := d.baseline.medianMAD()
	scale = math.Max(scale, d.cfg.MinScale)
	z := (y - median) / scale
	d.score = math.Max(0, d.score+math.Min(z, d.cfg.Clip)-d.cfg.Drift)
	if d.alarm {
		// Capped in alarm, so that the alarm clears about Threshold/Drift
		// samples after the signal is back, however long it lasted.
		d.score = math.Min(d.score, d.cfg.Threshold)
	}
	v := Verdict{Value: x, Baseline: d.cfg.invert(median), Z: z}
	switch {
	case !d.alarm && d.score >= d.cfg.Threshold:
		d.alarm, d.since, d.inAlarm = true, t, append(d.inAlarm[:0], y)
		v.Change = Raised
	case d.alarm && d.score == 0:
		d.alarm, d.since = false, time.Time{}
		v.Change = Cleared
	case d.alarm:
		d.inAlarm = append(d.inAlarm, y)
		if len(d.inAlarm) >= d.cfg.Relearn {
			// The shift lasted: it is the new normal.
			d.baseline.reset()
			for _, s := range d.inAlarm[len(d.inAlarm)-min(len(d.inAlarm), d.cfg.Window):] {
				d.baseline.add(s)
			}
			d.alarm, d.since, d.score = false, time.Time{}, 0
			v.Change = Relearned
		}
	default:
		// Out of alarm every sample teaches the baseline, pulled in to
		// Clip scales so that a spike moves it no more than a high
		// sample does. (Learning only the low samples would censor the
		// baseline, which then creeps down and alarms on the normal.)
		d.baseline.add(median + scale*math.Max(-d.cfg.Clip, math.Min(z, d.cfg.Clip)))
	}
	v.Alarm, v.Since, v.Score = d.alarm, d.since, d.score
	return v
}

// orDefault sets *v to d when it is zero or less (unset).
func orDefault[T int | float64 | time.Duration](v *T, d T) {
	if *v <= 0 {
		*v = d
	}
}
