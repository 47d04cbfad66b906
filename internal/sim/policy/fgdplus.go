package policy

import (
	"github.com/strata-dev/strata/internal/sim/frag"
	"github.com/strata-dev/strata/internal/sim/trace"
)

// FGDPlusName is the name of Strata's own policy.
const FGDPlusName = "FGD+"

// NewFGDPlus returns Strata's policy for target workload w.
func NewFGDPlus(w []trace.Pod) Scorer {
	f := NewFGD(frag.FromPods(w, 1))
	f.Exact = true
	return f
}
