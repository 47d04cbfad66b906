package sizing

import (
	"math"

	"github.com/strata-dev/strata/internal/autopilot/vertical"
)

// BaselineName is the baseline's row name.
const BaselineName = "baseline"

// Baseline is 1.15 × the peak seen so far: the VPA's safety margin on a
// running peak, what the VPA recommends with under a day of history.
type Baseline struct{}

func (Baseline) Name() string { return BaselineName }

func (Baseline) NewSizer() (Sizer, error) { return &peakSizer{}, nil }

type peakSizer struct {
	peak float64
	seen bool
}

func (s *peakSizer) Limit(int64) (float64, bool) { return 1.15 * s.peak, s.seen }

func (s *peakSizer) Observe(v vertical.Sample) error {
	s.peak, s.seen = math.Max(s.peak, v.Usage), true
	return nil
}

// Strata is Strata's recommender (package autopilot/vertical) with a config.
type Strata struct {
	Label  string // row name; "strata" when empty
	Config vertical.Config
}

func (p Strata) Name() string {
	if p.Label == "" {
		return "strata"
	}
	return p.Label
}

func (p Strata) NewSizer() (Sizer, error) {
	t, err := vertical.NewTask(p.Config)
	if err != nil {
		return nil, err
	}
	return &taskSizer{task: t}, nil
}

type taskSizer struct {
	task *vertical.Task
	last vertical.Recommendation
}

func (s *taskSizer) Limit(now int64) (float64, bool) {
	s.last = s.task.Recommend(now)
	return s.last.Limit, s.last.Ready
}

func (s *taskSizer) Observe(v vertical.Sample) error { return s.task.Observe(v) }

func (s *taskSizer) Reason() string { return s.last.Reason }
