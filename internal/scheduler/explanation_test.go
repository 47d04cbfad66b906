package scheduler

import (
	"fmt"
	"testing"

	"github.com/strata-dev/strata/api"
)

// An explanation names the nodes each filter rejected, the first
// MaxNamedRejections of them in the order the scheduler walked the cell,
// never the whole cell.
func TestExplanationNamesRejectedNodes(t *testing.T) {
	var nodes []*nodeBuilder
	for i := range 20 {
		nodes = append(nodes, node(fmt.Sprintf("small-%02d", i)).cpu(500).mem("8Gi"))
	}
	nodes = append(nodes, node("big").cpu(8000).mem("8Gi"))
	f := newFake(nodes...)
	f.putWorkload(workload("w", taskGroup("g").replicas(1).cpu(1000)))
	plan := Schedule(f, &api.Evaluation{ID: "e", Workload: "w"}, Options{Seed: 7, FeasibleSample: -1})
	mustEqual(t, "placed", len(planAllocs(plan)), 1)
	filtered := plan.Explanations[0].Filtered
	mustEqual(t, "reasons", len(filtered), 1)
	mustEqual(t, "rejected", filtered[0].Nodes, 20)
	mustEqual(t, "named", len(filtered[0].NodeNames), api.MaxNamedRejections)
	seen := map[string]bool{}
	for _, n := range filtered[0].NodeNames {
		if n == "big" || seen[n] || len(n) != len("small-00") {
			t.Fatalf("named %q among %v: want distinct rejected nodes", n, filtered[0].NodeNames)
		}
		seen[n] = true
	}
	// The same seed names the same nodes.
	again := Schedule(f, &api.Evaluation{ID: "e", Workload: "w"}, Options{Seed: 7, FeasibleSample: -1})
	mustEqual(t, "names again", fmt.Sprint(again.Explanations[0].Filtered[0].NodeNames), fmt.Sprint(filtered[0].NodeNames))
}
