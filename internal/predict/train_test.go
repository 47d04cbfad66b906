package predict

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"testing"
)

func TestBoostLearnsAThresholdAndWhereAbsentGoes(t *testing.T) {
	// Feature 0 above 5 means failure; feature 1 absent means failure.
	var x [][]float64
	var y []bool
	for i := range 400 {
		v := float64(i % 10)
		a := float64(i % 3)
		if i%7 == 0 {
			a = Absent
		}
		x = append(x, []float64{v, a})
		y = append(y, v > 5 || IsAbsent(a))
	}
	w := make([]float64, len(x))
	for i := range w {
		w[i] = 1
	}
	d := newBoostData(x, y, w)
	base, trees := boost(d, BoostConfig{Rounds: 60, LearningRate: 0.3, Depth: 2, L2: 1, MinChild: 1})
	m := &Model{Base: base, Trees: trees}
	for _, tc := range []struct {
		x    []float64
		fail bool
	}{{[]float64{9, 1}, true}, {[]float64{1, 1}, false}, {[]float64{1, Absent}, true}, {[]float64{0, 2}, false}} {
		if p := m.Score(tc.x); (p > 0.5) != tc.fail {
			t.Errorf("score(%v) = %.3f, want fail=%v", tc.x, p, tc.fail)
		}
	}
	// Deterministic: the same data gives the same trees, bit for bit.
	base2, trees2 := boost(newBoostData(x, y, w), BoostConfig{Rounds: 60, LearningRate: 0.3, Depth: 2, L2: 1, MinChild: 1})
	if base != base2 || !reflect.DeepEqual(trees, trees2) {
		t.Error("two trainings on the same data differ")
	}
}

// smallTrain is DefaultTrain made quick for tests.
var smallTrain = TrainConfig{Horizon: 5, TargetFPR: 0.02, NegativeRate: 1, Folds: 3, Seed: 1,
	Boost: BoostConfig{Rounds: 40, LearningRate: 0.2, Depth: 1, L2: 1, MinChild: 0.1}}

func TestTrainAndEvaluateOnASyntheticFleet(t *testing.T) {
	train := fleetStream{units: 600, days: 30, failing: failingEvery(600, 20, 8, 29), lead: 4, seed: 1}
	test := fleetStream{units: 600, days: 30, failing: failingEvery(600, 17, 6, 29), lead: 4, seed: 2}
	m, rep, err := Train(train.source(), smallTrain)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failures != len(train.failing) || rep.Positives == 0 || rep.OOFFalsePos > smallTrain.TargetFPR {
		t.Fatalf("report %+v: want %d failures, positives, OOF FPR within %v", rep, len(train.failing), smallTrain.TargetFPR)
	}
	out, err := Evaluate(nil, test.source(), []Policy{SmartRule{}, ModelPolicy{Label: "model", Model: m}})
	if err != nil {
		t.Fatal(err)
	}
	rule, model := out[0], out[1]
	if rule.Policy != SmartRuleName || model.Failed != len(test.failing) {
		t.Fatalf("outcomes %+v", out)
	}
	// The growth before each failure is what the model learns; the rule
	// also flags every healthy unit with a static count.
	if model.Recall < 0.9 || model.FalsePositiveRate > 0.05 {
		t.Errorf("model: recall %.2f, false positives %.3f; want >= 0.9 and <= 0.05", model.Recall, model.FalsePositiveRate)
	}
	if rule.FalsePositiveRate < 0.05 {
		t.Errorf("rule flags %.3f of healthy units; the fleet has static counts on about 10%%", rule.FalsePositiveRate)
	}
	if model.LeadDays < 1 || model.LeadDays > float64(test.lead) {
		t.Errorf("lead %.1f days, want 1..%d", model.LeadDays, test.lead)
	}
	// A model survives JSON and scores the same.
	b, _ := json.Marshal(m)
	var back Model
	if err := json.Unmarshal(b, &back); err != nil || back.Check() != nil {
		t.Fatalf("decode: %v, check: %v", err, back.Check())
	}
	x := []float64{}
	for range NumFeatures {
		x = append(x, 1)
	}
	if back.Score(x) != m.Score(x) {
		t.Error("a decoded model scores differently")
	}
}

func TestTrainRefusesBadInput(t *testing.T) {
	healthy := fleetStream{units: 50, days: 10, failing: map[int]int{}, seed: 1}
	if _, _, err := Train(healthy.source(), smallTrain); !errors.Is(err, ErrNoFailures) {
		t.Errorf("a stream without failures: err %v, want ErrNoFailures", err)
	}
	for _, mod := range []func(c *TrainConfig){
		func(c *TrainConfig) { c.Horizon = 0 },
		func(c *TrainConfig) { c.TargetFPR = 0 },
		func(c *TrainConfig) { c.TargetFPR = math.NaN() },
		func(c *TrainConfig) { c.NegativeRate = 0 },
		func(c *TrainConfig) { c.Folds = 1 },
		func(c *TrainConfig) { c.Boost.Rounds = 0 },
	} {
		c := smallTrain
		mod(&c)
		if _, _, err := Train(healthy.source(), c); err == nil || errors.Is(err, ErrNoFailures) {
			t.Errorf("config %+v accepted (err %v)", c, err)
		}
	}
	backwards := func(yield func(Observation) bool) error {
		yield(Observation{Unit: "a", Reading: reading(5, SmartReallocated, 1)})
		yield(Observation{Unit: "a", Reading: reading(3, SmartReallocated, 1), Failed: true})
		return nil
	}
	if _, _, err := Train(backwards, smallTrain); !errors.Is(err, ErrOutOfOrder) {
		t.Errorf("a stream that goes back in time: err %v, want ErrOutOfOrder", err)
	}
}

// flagOn is a policy that flags units on the days named; a unit is known
// by the value of its TaskFailures signal (the stream sets it).
type flagOn map[int][]int

func (flagOn) Name() string { return "scripted" }
func (f flagOn) Flag(h *History, _ []float64) bool {
	r, _ := h.Latest()
	unit, _ := r.Get(TaskFailures)
	for _, d := range f[int(unit)] {
		if d == r.Day {
			return true
		}
	}
	return false
}

func TestEvaluateCountsAsDefined(t *testing.T) {
	// a fails on day 3, b on day 2, c on day 0 (never seen before), d and
	// e never fail.
	stream := func(yield func(Observation) bool) error {
		obs := []Observation{
			{Unit: "a", Reading: reading(0)}, {Unit: "b", Reading: reading(0)}, {Unit: "c", Reading: reading(0), Failed: true},
			{Unit: "d", Reading: reading(0)}, {Unit: "e", Reading: reading(0)},
			{Unit: "a", Reading: reading(1)}, {Unit: "b", Reading: reading(1)}, {Unit: "d", Reading: reading(1)}, {Unit: "e", Reading: reading(1)},
			{Unit: "a", Reading: reading(2)}, {Unit: "b", Reading: reading(2), Failed: true}, {Unit: "d", Reading: reading(2)}, {Unit: "e", Reading: reading(2)},
			{Unit: "a", Reading: reading(3), Failed: true}, {Unit: "d", Reading: reading(3)}, {Unit: "e", Reading: reading(3)},
		}
		for _, o := range obs {
			o.Reading.Set(TaskFailures, float64(o.Unit[0]-'a'))
			if !yield(o) {
				return nil
			}
		}
		return nil
	}
	// a flagged on days 0 and 1 (day 0, the first, is history only: 2 days
	// ahead) and b only on its failure day
	// (too late); d flagged on day 3; e never.
	p := flagOn{0: {0, 1}, 1: {2}, 3: {3}}
	outs, err := Evaluate(nil, stream, []Policy{p})
	if err != nil {
		t.Fatal(err)
	}
	out := outs[0]
	want := Outcome{Policy: "scripted", Recall: 1.0 / 3, FalsePositiveRate: 0.5, LeadDays: 2, Caught: 1, Failed: 3, Flagged: 1, Healthy: 2}
	if out != want {
		t.Errorf("outcome %+v, want %+v", out, want)
	}
}
