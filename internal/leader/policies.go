package leader

import (
	"sync"

	"github.com/strata-dev/strata/internal/scheduler"
	"github.com/strata-dev/strata/internal/scheduler/fgd"
	"github.com/strata-dev/strata/internal/scheduler/predictive"
	"github.com/strata-dev/strata/internal/state"
)

// policies are the pluggable scheduling policies of one plan on snap. The
// fragmentation-aware fgd policy measures against the cell's own workloads
// and nodes as snap holds them; it is built on first use, so plans that do
// not use it pay nothing. predictive (the seed's PredictiveMLOptimized)
// builds on the same fgd configuration; the cell does not compute node
// forecasts yet, so until it does it places as its base (fgd, or binpack
// in a cell without GPU work).
func policies(snap *state.Snapshot) map[string]scheduler.Policy {
	var once sync.Once
	var cfg *fgd.Config
	config := func() *fgd.Config {
		once.Do(func() { cfg = fgd.FromCell(snap.Nodes(), snap.Workloads(nil)) })
		return cfg
	}
	return map[string]scheduler.Policy{
		fgd.Name: func(req *scheduler.Request) []scheduler.WeightedScorer { return fgd.New(config())(req) },
		predictive.Name: func(req *scheduler.Request) []scheduler.WeightedScorer {
			return predictive.New(&predictive.Config{GPU: config()})(req)
		},
	}
}
