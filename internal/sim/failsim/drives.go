package failsim

import (
	"fmt"

	"github.com/strata-dev/strata/internal/predict"
)

// ModelPolicyName is the learned model's name in results.
const ModelPolicyName = "failure-model"

// DrivesResult is one run of `strata sim failures`.
type DrivesResult struct {
	// Rows has one outcome per policy: the SMART rule, then the model.
	Rows  []predict.Outcome
	Train predict.TrainReport
	Test  predict.Span
	Model *predict.Model
}

// Drives trains the failure model on train and judges it, beside the
// naive SMART rule, on test. With warm, the training stream's readings
// from before the test's first day are the units' past when the test
// begins (a cell keeps its units' histories); they are never judged.
func Drives(train, test predict.Source, cfg predict.TrainConfig, warm bool) (*DrivesResult, error) {
	m, rep, err := predict.Train(train, cfg)
	if err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	var past predict.Source
	if warm {
		past = train
	}
	if cfg.Progress != nil {
		cfg.Progress("scoring the test stream")
	}
	span, err := predict.SpanOf(test)
	if err != nil {
		return nil, fmt.Errorf("test: %w", err)
	}
	rows, err := predict.Evaluate(past, test, []predict.Policy{predict.SmartRule{}, predict.ModelPolicy{Label: ModelPolicyName, Model: m}})
	if err != nil {
		return nil, fmt.Errorf("test: %w", err)
	}
	return &DrivesResult{Rows: rows, Train: rep, Test: span, Model: m}, nil
}
