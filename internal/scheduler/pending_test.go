package scheduler

import (
	"runtime"
	"testing"

	"github.com/strata-dev/strata/api"
)

// TestPendingReplicasAreOneCount reproduces the scheduler's part of issue
// 18's defect 2: one workload of replicas: 1000000 (the documented
// maximum) made the server allocate per pending replica on every
// evaluation (a slot and an intent each: 180 MB a run), and every
// capacity change runs the blocked evaluation again. A group's replicas
// that have no allocation are one run of indices: what an evaluation
// allocates must not grow with the replicas it cannot place.
func TestPendingReplicasAreOneCount(t *testing.T) {
	cost := func(replicas int) (bytes uint64, plan *api.Plan) {
		f := newFake(node("n1").cpu(4000).mem("16Gi"), node("n2").cpu(4000).mem("16Gi"))
		w := workload("big", taskGroup("g").replicas(replicas).cpu(10).mem("1Mi"))
		f.putWorkload(w)
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		plan = schedule(f, "big", 7)
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc, plan
	}
	small, smallPlan := cost(100_000)
	large, largePlan := cost(1_000_000)
	for _, p := range []*api.Plan{smallPlan, largePlan} {
		if placed := len(planAllocs(p)); placed != 800 {
			t.Fatalf("placed %d, want the 800 the two nodes hold", placed)
		}
	}
	if got, want := largePlan.Failures[0].Missing, 1_000_000-800; got != want {
		t.Fatalf("missing %d, want %d", got, want)
	}
	perPending := float64(int64(large)-int64(small)) / 900_000
	t.Logf("an evaluation allocated %d KiB with 10^5 replicas, %d KiB with 10^6: %.1f bytes per pending replica", small>>10, large>>10, perPending)
	if perPending > 1 {
		t.Errorf("%.1f bytes allocated per pending replica: pending replicas of a group must cost one count, not an object each", perPending)
	}
}
