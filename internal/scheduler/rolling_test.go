package scheduler

import (
	"strings"
	"testing"
	"time"

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

// deployState is a fakeState that keeps deployments.
type deployState struct {
	*fakeState
	deployment *api.Deployment
}

func (d *deployState) LatestDeployment(string, string) *api.Deployment { return d.deployment }

func rollAt(st State, name string, seed int64, now time.Time) *api.Plan {
	return Schedule(st, &api.Evaluation{ID: "eval-" + name, Workload: name}, Options{Seed: seed, Now: now})
}

// liveRunning counts the workload's running allocations that are not
// being stopped.
func liveRunning(f *fakeState, name string) (old, cur int) {
	for _, a := range f.AllocsByWorkload(api.DefaultNamespace, name) {
		if a.DesiredStatus == api.DesiredRun && a.ClientStatus == api.AllocRunning {
			if a.WorkloadVersion == 1 {
				old++
			} else {
				cur++
			}
		}
	}
	return old, cur
}

// TestRollingUpdateSteps walks a 3-replica update with maxParallel 1 on an
// injected clock: every step keeps 3 running, the old copy stops only
// after its replacement ran minHealthyTime, and the plan asks to be looked
// at again when the next replacement turns healthy.
func TestRollingUpdateSteps(t *testing.T) {
	f := threeNodes()
	w := workload("web", taskGroup("g").replicas(3).cpu(1000))
	w.Version = 1
	deploy(t, f, w)
	w2 := workload("web", taskGroup("g").replicas(3).cpu(1000).command("v2"))
	w2.Version = 2
	f.putWorkload(w2)
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	st := &deployState{fakeState: f, deployment: &api.Deployment{ID: "d1", Workload: "web", Version: 2, FromVersion: 1,
		Status: api.DeploymentRunning, CreateTime: t0, Groups: []*api.DeploymentGroup{{Name: "g", Desired: 3}}}}
	now := t0
	for step := 0; step < 20; step++ {
		plan := rollAt(st, "web", int64(step), now)
		if len(plan.Failures) > 0 {
			t.Fatalf("step %d: %s", step, plan.Failures[0].Summary)
		}
		if plan.Deployment == nil {
			t.Fatalf("step %d: no deployment progress", step)
		}
		st.deployment.Status = plan.Deployment.Status
		st.deployment.Groups = plan.Deployment.Groups
		f.apply(plan, true)
		for _, a := range planAllocs(plan) {
			x := f.alloc(a.ID).Copy()
			x.ClientStatus, x.ClientStatusTime = api.AllocRunning, now
			f.putAlloc(x)
		}
		old, cur := liveRunning(f, "web")
		if old+cur < 3 {
			t.Fatalf("step %d: %d old + %d new running, below 3", step, old, cur)
		}
		if plan.Deployment.Status == api.DeploymentSuccessful {
			mustEqual(t, "old left", old, 0)
			mustEqual(t, "new running", cur, 3)
			g := plan.Deployment.Groups[0]
			mustEqual(t, "healthy", g.Healthy, 3)
			mustEqual(t, "steps: place, then (stop old + place) twice, then stop the last", step, 3)
			return
		}
		// The agent's report that the replacement runs re-evaluates the
		// workload (the server's deployment trigger): nothing to do yet,
		// but a look again when it turns healthy.
		again := rollAt(st, "web", int64(100+step), now)
		mustEqual(t, "nothing moves before the replacement is healthy", again.IsNoOp(), true)
		if len(again.FollowUps) != 1 {
			t.Fatalf("step %d: want a follow-up evaluation, got %d", step, len(again.FollowUps))
		}
		mustEqual(t, "follow-up at healthy time", again.FollowUps[0].WaitUntil, now.Add(api.DefaultUpdateMinHealthyTime))
		now = again.FollowUps[0].WaitUntil
	}
	t.Fatal("update never finished")
}

func TestDeploymentStatusFromPlan(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	setup := func(canary int, cpu int64) (*deployState, *api.Workload) {
		f := threeNodes()
		deploy(t, f, workload("web", taskGroup("g").replicas(3).cpu(1000)))
		w2 := workload("web", taskGroup("g").replicas(3).cpu(cpu).command("v2"))
		w2.Version = 2
		w2.Groups[0].Update = &api.UpdatePolicy{MaxParallel: 1, MinHealthyTime: time.Second, HealthyDeadline: time.Minute,
			ProgressDeadline: 2 * time.Minute, Canary: canary}
		f.putWorkload(w2)
		return &deployState{fakeState: f, deployment: &api.Deployment{ID: "d1", Workload: "web", Version: 2, FromVersion: 1,
			Status: api.DeploymentRunning, CreateTime: t0, Groups: []*api.DeploymentGroup{{Name: "g", Desired: 3, DesiredCanaries: canary}}}}, w2
	}
	t.Run("blocked with the scheduler's reason", func(t *testing.T) {
		st, _ := setup(0, 64000)
		plan := rollAt(st, "web", 1, t0)
		mustEqual(t, "status", plan.Deployment.Status, api.DeploymentBlocked)
		mustEqual(t, "reason", strings.Contains(plan.Deployment.StatusDescription, "insufficient cpu"), true)
		mustEqual(t, "old kept", len(plan.Stop), 0)
	})
	t.Run("progress deadline fails it", func(t *testing.T) {
		st, _ := setup(0, 1000)
		f := st.fakeState
		f.apply(rollAt(st, "web", 1, t0), false) // placed, never starts
		plan := rollAt(st, "web", 2, t0.Add(2*time.Minute))
		mustEqual(t, "status", plan.Deployment.Status, api.DeploymentFailed)
		mustEqual(t, "old kept", len(plan.Stop), 0)
		st.deployment.Status = api.DeploymentFailed
		halted := rollAt(st, "web", 3, t0.Add(3*time.Minute))
		mustEqual(t, "a failed deployment moves nothing", halted.IsNoOp(), true)
	})
	t.Run("canaries wait for promotion beside the old version", func(t *testing.T) {
		st, _ := setup(2, 1000)
		f := st.fakeState
		plan := rollAt(st, "web", 1, t0)
		mustEqual(t, "canaries placed at once", len(planAllocs(plan)), 2)
		f.apply(plan, true)
		for _, a := range planAllocs(plan) {
			x := f.alloc(a.ID).Copy()
			x.ClientStatus, x.ClientStatusTime = api.AllocRunning, t0
			f.putAlloc(x)
		}
		plan = rollAt(st, "web", 2, t0.Add(time.Minute))
		mustEqual(t, "paused", plan.Deployment.Status, api.DeploymentPaused)
		mustEqual(t, "nothing stops before promotion", len(plan.Stop), 0)
		mustEqual(t, "nothing more placed", len(plan.Place), 0)
		st.deployment.Groups[0].Promoted = true
		plan = rollAt(st, "web", 3, t0.Add(time.Minute))
		mustEqual(t, "promoted: the canaries' old copies stop", len(planStops(plan)), 2)
		mustEqual(t, "and the last replica rolls", len(planAllocs(plan)), 1)
	})
}

// TestGangUpdateReplacesTheWholeGangBeside: a gang's new version is placed
// whole beside the old gang (a gang of one member at a time would never
// fit its minMember), and no old member stops before its replacement is
// healthy.
func TestGangUpdateReplacesTheWholeGangBeside(t *testing.T) {
	f := threeNodes()
	w := workload("train", taskGroup("g").replicas(3).cpu(1000).gang(3, ""))
	deploy(t, f, w)
	w2 := workload("train", taskGroup("g").replicas(3).cpu(1000).command("v2").gang(3, ""))
	w2.Version = 2
	f.putWorkload(w2)
	plan := schedule(f, "train", 3)
	mustEqual(t, "failures", len(plan.Failures), 0)
	mustEqual(t, "the whole new gang placed", len(planAllocs(plan)), 3)
	mustEqual(t, "no old member stopped", len(planStops(plan)), 0)
}

// TestRollingUpdateHonoursDisruptionBudget: a group's
// disruption.maxUnavailable bounds a rolling update's stops with its
// maxParallel, the stricter winning. Old copies 1 and 2 are down
// (restarting), so when the replacement of index 0 turns healthy the group
// has two healthy allocations: maxParallel 3 alone lets old 0 stop, a
// budget of 0 keeps it.
func TestRollingUpdateHonoursDisruptionBudget(t *testing.T) {
	tests := []struct {
		name           string
		maxUnavailable int
		wantStops      int
	}{
		{"budget 3: maxParallel 3 decides, old 0 stops", 3, 1},
		{"budget 0 is stricter: old 0 stays", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := threeNodes()
			olds := deploy(t, f, workload("web", taskGroup("g").replicas(3).cpu(1000)))
			for _, a := range olds[1:] {
				f.setClient(a.ID, api.AllocPending)
			}
			g2 := taskGroup("g").replicas(3).cpu(1000).command("v2")
			g2.g.Update = &api.UpdatePolicy{MaxParallel: 3, MinHealthyTime: 10 * time.Second, HealthyDeadline: time.Minute, ProgressDeadline: 10 * time.Minute}
			g2.g.Disruption = &api.DisruptionPolicy{MaxUnavailable: tt.maxUnavailable}
			w2 := workload("web", g2)
			w2.Version = 2
			f.putWorkload(w2)
			t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

			plan := rollAt(f, "web", 1, t0)
			mustEqual(t, "replacements placed beside", len(planAllocs(plan)), 3)
			f.apply(plan, true)
			first := planAllocs(plan)[0]
			x := f.alloc(first.ID).Copy()
			x.ClientStatus, x.ClientStatusTime = api.AllocRunning, t0
			f.putAlloc(x)

			plan = rollAt(f, "web", 2, t0.Add(time.Minute))
			mustEqual(t, "old copies stopped", len(planStops(plan)), tt.wantStops)
		})
	}
}
