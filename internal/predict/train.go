package predict

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
)

// ErrNoFailures: the training stream holds no failure inside the horizon
// of a reading, so there is nothing to learn from.
var ErrNoFailures = errors.New("no failures to learn from")

// TrainConfig is how Train learns.
type TrainConfig struct {
	// Horizon: a reading is a positive example when its unit fails 1 to
	// Horizon days later.
	Horizon int
	// TargetFPR is the share of healthy units the operating threshold may
	// flag, measured on out-of-fold scores of the training stream.
	TargetFPR float64
	// NegativeRate is the share of negative readings kept for training
	// (each kept one weighs 1/NegativeRate); every positive is kept.
	NegativeRate float64
	// Folds is how many folds (by unit) the threshold is cross-fitted on.
	Folds int
	// Seed picks the negatives kept and the folds.
	Seed  uint64
	Boost BoostConfig
	// Progress, when set, hears each stage as it starts (training takes
	// seconds to minutes); it must not block.
	Progress func(stage string)
}

func (c *TrainConfig) progress(format string, args ...any) {
	if c.Progress != nil {
		c.Progress(fmt.Sprintf(format, args...))
	}
}

// DefaultTrain is the configuration `strata sim failures` uses
// (docs/prediction.md says how it was chosen: on training days only).
var DefaultTrain = TrainConfig{Horizon: 7, TargetFPR: 0.015, NegativeRate: 1, Folds: 5, Seed: 1, Boost: DefaultBoost}

func (c *TrainConfig) validate() error {
	switch {
	case c.Horizon < 1:
		return fmt.Errorf("horizon: must be at least 1 day, got %d", c.Horizon)
	case !(c.TargetFPR > 0 && c.TargetFPR < 1):
		return fmt.Errorf("target false-positive rate: must be in (0, 1), got %g", c.TargetFPR)
	case !(c.NegativeRate > 0 && c.NegativeRate <= 1):
		return fmt.Errorf("negative rate: must be in (0, 1], got %g", c.NegativeRate)
	case c.Folds < 2:
		return fmt.Errorf("folds: must be at least 2, got %d", c.Folds)
	case c.Boost.Rounds < 1 || c.Boost.Depth < 1 || c.Boost.LearningRate <= 0:
		return fmt.Errorf("boost: rounds, depth and learning rate must be positive")
	}
	return nil
}

// TrainReport says what Train saw and how the threshold performs on the
// training stream, out of fold.
type TrainReport struct {
	Units       int     `json:"units"`
	Readings    int     `json:"readings"`
	Failures    int     `json:"failures"`
	Examples    int     `json:"examples"`
	Positives   int     `json:"positives"`
	FirstDay    int     `json:"firstDay"`
	LastDay     int     `json:"lastDay"`
	Threshold   float64 `json:"threshold"`
	OOFRecall   float64 `json:"oofRecall"`
	OOFFalsePos float64 `json:"oofFalsePositiveRate"`
	// Missed are the units that failed in the training stream and that
	// the threshold misses out of fold, with their best score.
	Missed []UnitScore `json:"missed,omitempty"`
}

// UnitScore is a unit and a score.
type UnitScore struct {
	Unit  string  `json:"unit"`
	Score float64 `json:"score"`
}

// examples is a training set: feature rows with labels, weights and the
// fold of their unit.
type examples struct {
	x      [][]float64
	label  []bool
	weight []float64
	fold   []int
}

func (e *examples) subset(keep func(i int) bool) *boostData {
	var x [][]float64
	var label []bool
	var weight []float64
	for i := range e.x {
		if keep(i) {
			x, label, weight = append(x, e.x[i]), append(label, e.label[i]), append(weight, e.weight[i])
		}
	}
	return newBoostData(x, label, weight)
}

// Train learns a model from src: every reading of a unit that fails 1 to
// Horizon days later is a positive example, a sample of the others a
// negative one (readings in the last Horizon days of the stream whose
// unit does not fail are left out: their label is not yet known, and the
// failure day's own reading is left out: a flag on it comes too late).
// The stream's first day is history only: on it every unit lacks a past
// through no fault of its own, which no later day (and no day of a cell
// that keeps its units' histories) looks like.
// The threshold is chosen so that at most TargetFPR of the healthy units
// are flagged on some day, judged on scores each unit gets from the model
// of the folds it was not trained in.
func Train(src Source, cfg TrainConfig) (*Model, TrainReport, error) {
	if err := cfg.validate(); err != nil {
		return nil, TrainReport{}, err
	}
	cfg.progress("scanning the training stream")
	facts, err := scanFacts(src)
	if err != nil {
		return nil, TrainReport{}, err
	}
	cfg.progress("building examples from %d readings of %d units", facts.readings, facts.units)
	rep := TrainReport{Units: facts.units, Readings: facts.readings, Failures: len(facts.failDay), FirstDay: facts.first, LastDay: facts.last}
	ex, err := collect(src, &facts, &cfg)
	if err != nil {
		return nil, rep, err
	}
	rep.Examples = len(ex.x)
	for _, y := range ex.label {
		if y {
			rep.Positives++
		}
	}
	if rep.Positives == 0 {
		return nil, rep, fmt.Errorf("%w: %d units, %d failures, none with a reading 1..%d days before it", ErrNoFailures, facts.units, len(facts.failDay), cfg.Horizon)
	}
	folds := make([]*Model, cfg.Folds)
	for k := range cfg.Folds {
		cfg.progress("fold %d/%d: %d trees", k+1, cfg.Folds, cfg.Boost.Rounds)
		d := ex.subset(func(i int) bool { return ex.fold[i] != k })
		base, trees := boost(d, cfg.Boost)
		folds[k] = &Model{Features: FeatureNames(), Horizon: cfg.Horizon, Base: base, Trees: trees}
	}
	cfg.progress("scoring every unit out of fold")
	oof, err := outOfFold(src, &facts, &cfg, folds)
	if err != nil {
		return nil, rep, err
	}
	rep.Threshold = thresholdFor(oof.healthyMax, cfg.TargetFPR)
	rep.OOFRecall, rep.OOFFalsePos = oof.rates(rep.Threshold)
	for _, f := range oof.failed {
		if f.Score < rep.Threshold {
			rep.Missed = append(rep.Missed, f)
		}
	}
	cfg.progress("final model on all %d examples", len(ex.x))
	base, trees := boost(ex.subset(func(int) bool { return true }), cfg.Boost)
	m := &Model{Features: FeatureNames(), Horizon: cfg.Horizon, Base: base, Trees: trees, Threshold: rep.Threshold}
	return m, rep, nil
}

// collect builds the training examples from src.
func collect(src Source, facts *streamFacts, cfg *TrainConfig) (*examples, error) {
	ex := &examples{}
	fleet := NewFleet()
	var failed error
	err := src(func(o Observation) bool {
		if err := fleet.Observe(o); err != nil {
			failed = err
			return false
		}
		day := o.Reading.Day
		fd, fails := facts.failDay[o.Unit]
		if (fails && day >= fd) || day == facts.first {
			return true // the stream's first day is history only (burnIn)
		}
		positive := fails && fd-day <= cfg.Horizon
		if !positive && !fails && day > facts.last-cfg.Horizon {
			return true // censored: the unit may fail after the stream ends
		}
		weight := 1.0
		if !positive {
			if unitHash(o.Unit, uint64(day), cfg.Seed) >= cfg.NegativeRate {
				return true
			}
			weight = 1 / cfg.NegativeRate
		}
		ex.x = append(ex.x, fleet.Features(o.Unit, make([]float64, 0, NumFeatures)))
		ex.label = append(ex.label, positive)
		ex.weight = append(ex.weight, weight)
		ex.fold = append(ex.fold, foldOf(o.Unit, cfg.Seed, cfg.Folds))
		return true
	})
	if err == nil {
		err = failed
	}
	return ex, err
}

// oofScores are, per unit, the highest out-of-fold score: over every day
// for units that stay healthy, over the days before the failure for those
// that fail.
type oofScores struct {
	healthyMax []float64
	failedMax  []float64
	failed     []UnitScore
}

func (o *oofScores) rates(threshold float64) (recall, fpr float64) {
	return share(o.failedMax, threshold), share(o.healthyMax, threshold)
}

func share(maxima []float64, threshold float64) float64 {
	if len(maxima) == 0 {
		return 0
	}
	n := 0
	for _, m := range maxima {
		if m >= threshold {
			n++
		}
	}
	return float64(n) / float64(len(maxima))
}

func outOfFold(src Source, facts *streamFacts, cfg *TrainConfig, folds []*Model) (*oofScores, error) {
	fleet := NewFleet()
	best := map[string]float64{}
	x := make([]float64, 0, NumFeatures)
	err := src(func(o Observation) bool {
		_ = fleet.Observe(o) // collect has seen the same stream accept it
		if fd, fails := facts.failDay[o.Unit]; (fails && o.Reading.Day >= fd) || o.Reading.Day == facts.first {
			return true
		}
		x = fleet.Features(o.Unit, x[:0])
		s := folds[foldOf(o.Unit, cfg.Seed, cfg.Folds)].Score(x)
		if prev, ok := best[o.Unit]; !ok || s > prev {
			best[o.Unit] = s
		}
		return true
	})
	out := &oofScores{}
	units := make([]string, 0, len(best))
	for u := range best {
		units = append(units, u)
	}
	slices.Sort(units)
	for _, u := range units {
		if _, fails := facts.failDay[u]; fails {
			out.failedMax = append(out.failedMax, best[u])
			out.failed = append(out.failed, UnitScore{Unit: u, Score: best[u]})
		} else {
			out.healthyMax = append(out.healthyMax, best[u])
		}
	}
	for u := range facts.failDay {
		if _, ok := best[u]; !ok {
			out.failedMax = append(out.failedMax, 0) // failed on its first day: never scored before
		}
	}
	return out, err
}

// thresholdFor is the lowest threshold that flags at most target of the
// healthy units (a unit is flagged when its highest score reaches it).
func thresholdFor(healthyMax []float64, target float64) float64 {
	if len(healthyMax) == 0 {
		return 0.5
	}
	s := slices.Clone(healthyMax)
	slices.SortFunc(s, func(a, b float64) int { return -cmpFloat(a, b) })
	k := int(math.Floor(target * float64(len(s))))
	if k >= len(s) {
		return 0
	}
	return math.Nextafter(s[k], math.Inf(1))
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// unitHash is a deterministic draw in [0, 1) for a unit and a salt.
func unitHash(unit string, salt, seed uint64) float64 {
	h := fnv.New64a()
	h.Write([]byte(unit))
	var b [16]byte
	for i := range 8 {
		b[i] = byte(salt >> (8 * i))
		b[8+i] = byte(seed >> (8 * i))
	}
	h.Write(b[:])
	return float64(h.Sum64()>>11) / (1 << 53)
}

func foldOf(unit string, seed uint64, folds int) int {
	return int(unitHash(unit, math.MaxUint64, seed) * float64(folds))
}
