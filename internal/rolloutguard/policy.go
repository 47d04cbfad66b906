package rolloutguard

import "time"

// Policy tunes the guard; zero fields take the defaults of WithDefaults.
type Policy struct {
	// Alpha bounds the probability that a version as good as its baseline
	// is halted, all tests and strata together (0.01).
	Alpha float64
	// AllShare is the share of Alpha spent on the three tests of all
	// copies (0.5); the rest is split over the tests of the node classes,
	// which are many but matter only for versions bad on one class.
	AllShare float64
	// Ratios are the effect sizes the tests mix (odds or rate ratios:
	// 2, 4, 10, 30, 100, 1000).
	Ratios []float64
	// StartWindow: trouble within it of a start is a failed start (60 s).
	StartWindow time.Duration
	// Settle is how long an event waits before it counts, so that the
	// incident engine may explain it first (30 s).
	Settle time.Duration
	// MaxStartsPerAlloc and MaxEventsPerAlloc bound what one copy adds to
	// the evidence (2 starts, 3 events): a copy crash-looping on a broken
	// node is one copy's evidence, not a hundred.
	MaxStartsPerAlloc, MaxEventsPerAlloc int
	// MaxPerNode bounds what the copies of one node add (4): a broken
	// node hosting several copies is still one node.
	MaxPerNode int
	// MinAllocs and MinNodes: a verdict needs evidence from this many new
	// copies (2) on this many nodes (2).
	MinAllocs, MinNodes int
	// Lookback is how long after it came a trouble may still be explained
	// away (15 min): infrastructure incidents open minutes after their
	// first trouble when it comes slowly.
	Lookback time.Duration
	// StartFloor floors the old version's start failure rate (0.01), and
	// Confidence is the z of the upper confidence bounds of the baselines
	// (1: a one-sided 84 % bound; docs/incidents.md weighs it).
	StartFloor, Confidence float64
}

// WithDefaults returns p with its zero fields defaulted.
func (p Policy) WithDefaults() Policy {
	orDefault(&p.Alpha, 0.01)
	if p.AllShare <= 0 || p.AllShare >= 1 {
		p.AllShare = 0.5
	}
	if len(p.Ratios) == 0 {
		p.Ratios = []float64{2, 4, 10, 30, 100, 1000}
	}
	orDefault(&p.StartWindow, time.Minute)
	orDefault(&p.Settle, 30*time.Second)
	orDefault(&p.MaxStartsPerAlloc, 2)
	orDefault(&p.MaxEventsPerAlloc, 3)
	orDefault(&p.MaxPerNode, 4)
	orDefault(&p.Lookback, 15*time.Minute)
	orDefault(&p.MinAllocs, 2)
	orDefault(&p.MinNodes, 2)
	orDefault(&p.StartFloor, 0.01)
	orDefault(&p.Confidence, 1)
	return p
}

// orDefault sets *v to d when it is zero or less (unset).
func orDefault[T int | float64 | time.Duration](v *T, d T) {
	if *v <= 0 {
		*v = d
	}
}
