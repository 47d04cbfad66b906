package leader

import (
	"sync"

	"github.com/strata-dev/strata/internal/scheduler"
	"github.com/strata-dev/strata/internal/scheduler/fgd"
	"github.com/strata-dev/strata/internal/state"
)

// policies are the pluggable scheduling policies of one plan on snap. The
// fragmentation-aware fgd policy measures against the cell's own workloads
// and nodes as snap holds them; it is built on first use, so plans that do
// not use it pay nothing.
func policies(snap *state.Snapshot) map[string]scheduler.Policy {
	var once sync.Once
	var p scheduler.Policy
	return map[string]scheduler.Policy{
		fgd.Name: func(req *scheduler.Request) []scheduler.WeightedScorer {
			once.Do(func() { p = fgd.New(fgd.FromCell(snap.Nodes(), snap.Workloads(nil))) })
			return p(req)
		},
	}
}
