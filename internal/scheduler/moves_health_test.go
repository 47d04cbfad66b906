package scheduler

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
)

// setHealth records an agent's health report on an allocation.
func (f *fakeState) setHealth(id, status string) {
	a := f.alloc(id).Copy()
	a.Health = &api.AllocHealth{Status: status, Since: drainNow}
	f.putAlloc(a)
}

// TestDrainWaitsForTheReplacementToBeReady: on nodes whose agents report
// health, a replica is served by a healthy allocation, not merely a
// running one. A move's old allocation stops only once its replacement
// passes its readiness checks, and a replacement that runs but is not
// ready spends the budget: the next move waits. Otherwise a drain of a
// service whose replicas take a while to become ready takes many out of
// the service registry at once, each "running".
func TestDrainWaitsForTheReplacementToBeReady(t *testing.T) {
	w := workload("w", taskGroup("g").replicas(2).cpu(1000))
	f := drainRig(t, w, 2)
	for _, a := range slices.Clone(f.allocs) {
		f.setHealth(a.ID, api.HealthHealthy)
	}
	drainNode(f, "a", drainNow.Add(time.Hour), false)
	step := func(want string) *api.Plan {
		t.Helper()
		plan := drainPlanAt(f, "w", drainNow)
		var idx []int
		for _, a := range planAllocs(plan) {
			idx = append(idx, a.Index)
		}
		mustEqual(t, "plan", fmt.Sprintf("place %v stop %v", idxOrEmpty(idx), planStops(plan)), want)
		f.apply(plan, true)
		return plan
	}
	first := step("place [0] stop []")
	repl := planAllocs(first)[0].ID
	f.setClient(repl, api.AllocRunning)
	f.setHealth(repl, api.HealthPending) // running, its readiness check not passed yet
	step("place [] stop []")
	f.setHealth(repl, api.HealthUnhealthy)
	step("place [] stop []")
	f.setHealth(repl, api.HealthHealthy)
	step("place [1] stop [old-00:moved: its replacement runs]")
}

// TestDrainWithoutHealthReportsCountsRunning: nodes that report no health
// (the simulator's, fake agents) keep the rule "running serves".
func TestDrainWithoutHealthReportsCountsRunning(t *testing.T) {
	w := workload("w", taskGroup("g").replicas(2).cpu(1000))
	f := drainRig(t, w, 2)
	drainNode(f, "a", drainNow.Add(time.Hour), false)
	plan := drainPlanAt(f, "w", drainNow)
	f.apply(plan, true)
	f.setClient(planAllocs(plan)[0].ID, api.AllocRunning)
	plan = drainPlanAt(f, "w", drainNow)
	mustEqual(t, "stops", fmt.Sprint(planStops(plan)), "[old-00:moved: its replacement runs]")
}
