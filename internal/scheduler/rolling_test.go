package scheduler

import (
	"testing"

	"github.com/strata-dev/strata/api"
)

// Observed defects of issue 10: an update stopped every old replica at
// once (running went to 0/3), and an update that could not be placed
// stopped the old version and left nothing running.

func TestUpdateDoesNotStopEveryOldReplicaAtOnce(t *testing.T) {
	f := threeNodes()
	w := workload("web", taskGroup("g").replicas(3).cpu(1000))
	w.SchedulingPolicy.Type = api.PolicySpread
	deploy(t, f, w)
	w2 := *w
	w2.Version = 2
	w2.Groups = []*api.TaskGroup{taskGroup("g").replicas(3).cpu(1000).command("v2").g}
	f.putWorkload(&w2)

	plan := schedule(f, "web", 7)
	mustEqual(t, "old replicas stopped before any replacement is healthy", len(planStops(plan)), 0)
	mustEqual(t, "replacements placed (maxParallel 1)", len(planAllocs(plan)), 1)
}

func TestUnplaceableUpdateKeepsOldVersionRunning(t *testing.T) {
	f := threeNodes()
	w := workload("web", taskGroup("g").replicas(3).cpu(1000))
	deploy(t, f, w)
	w2 := *w
	w2.Version = 2
	w2.Groups = []*api.TaskGroup{taskGroup("g").replicas(3).cpu(64000).g} // fits nowhere
	f.putWorkload(&w2)

	plan := schedule(f, "web", 7)
	mustEqual(t, "failure reported", len(plan.Failures), 1)
	mustEqual(t, "old version stopped", len(planStops(plan)), 0)
}
