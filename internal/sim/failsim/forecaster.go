package failsim

import (
	"fmt"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/predict"
)

// Forecaster is the correlated-failure model of a cell in a simulation:
// it learns from the cell's past failures, sees each failure of the
// window once its time has passed, and answers each node's failure risk
// as an api.NodeForecast (what the scheduler's predictive policy reads).
// Risks are read from the model again after a failure and otherwise every
// refresh seconds. It is not safe for concurrent use.
type Forecaster struct {
	m      *predict.Correlated
	cell   *OnCell
	start  int64 // the simulation's time 0, in the tickets' clock
	seen   int   // window failures observed
	risks  []float64
	readAt int64
	dirty  bool
}

// forecastRefresh is how stale a risk may grow without a failure.
const forecastRefresh = 600

// NewForecaster learns from cell's past failures; start is the
// simulation's time 0 in the tickets' clock.
func NewForecaster(cell *OnCell, start int64, cfg predict.CorrelatedConfig) (*Forecaster, error) {
	m, err := predict.NewCorrelated(cfg, cell.Places)
	if err != nil {
		return nil, err
	}
	for _, f := range cell.Past {
		if err := m.Observe(cell.Places[f.Node].Node, f.At); err != nil {
			return nil, fmt.Errorf("past failures: %w", err)
		}
	}
	return &Forecaster{m: m, cell: cell, start: start, dirty: true, readAt: -forecastRefresh}, nil
}

// Advance moves the model to simulation time now: the window's failures
// before now are observed.
func (f *Forecaster) Advance(now int64) {
	for f.seen < len(f.cell.Window) && f.cell.Window[f.seen].At < now {
		w := f.cell.Window[f.seen]
		_ = f.m.Observe(f.cell.Places[w.Node].Node, f.start+w.At) // in time order by construction
		f.seen++
		f.dirty = true
	}
	if f.dirty || now-f.readAt >= forecastRefresh {
		f.m.Advance(f.start + now)
		f.risks = f.m.Risks(f.start+now, f.risks[:0])
		f.readAt, f.dirty = now, false
	}
}

// Forecast is node's forecast: its failure risk within a week.
func (f *Forecaster) Forecast(node int) (api.NodeForecast, bool) {
	if node < 0 || node >= len(f.risks) {
		return api.NodeForecast{}, false
	}
	return api.NodeForecast{FailureRisk: f.risks[node], HasFailureRisk: true}, true
}
