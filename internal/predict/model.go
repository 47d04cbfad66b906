package predict

import (
	"errors"
	"fmt"
	"slices"
)

// ErrFeatures: a model was trained on another feature table than this
// build's (decoded from an older or newer Strata); it cannot score.
var ErrFeatures = errors.New("model's features differ from this build's")

// Model is a trained failure model: the probability that a unit fails
// within Horizon days after the day scored, and the score at or above which
// it is flagged. It is immutable and safe for concurrent use.
type Model struct {
	// Features names the columns the trees index, in order.
	Features []string `json:"features"`
	// Horizon is the days ahead the model was trained to see.
	Horizon int     `json:"horizon"`
	Base    float64 `json:"base"`
	Trees   []Tree  `json:"trees"`
	// Threshold is the operating point chosen on the training data.
	Threshold float64 `json:"threshold"`
}

// Check reports whether m can score this build's feature vectors.
func (m *Model) Check() error {
	if !slices.Equal(m.Features, FeatureNames()) {
		return fmt.Errorf("%w: the model has %d features, this build %d; retrain it", ErrFeatures, len(m.Features), NumFeatures)
	}
	for t := range m.Trees {
		for _, n := range m.Trees[t].Nodes {
			if n.Feature >= NumFeatures || (n.Feature >= 0 && (n.Left <= 0 || n.Right <= 0 || n.Left >= len(m.Trees[t].Nodes) || n.Right >= len(m.Trees[t].Nodes))) {
				return fmt.Errorf("%w: tree %d is malformed", ErrFeatures, t)
			}
		}
	}
	return nil
}

// Score is the probability of failure within Horizon days for feature
// vector x (History.Features).
func (m *Model) Score(x []float64) float64 {
	margin := m.Base
	for t := range m.Trees {
		margin += m.Trees[t].eval(x)
	}
	return sigmoid(margin)
}

// Flag reports whether x scores at or above the operating threshold.
func (m *Model) Flag(x []float64) bool { return m.Score(x) >= m.Threshold }
