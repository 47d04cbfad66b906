package scheduler

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/lease"
)

var tNow = time.Date(2030, 6, 1, 12, 0, 0, 0, time.UTC)

func scheduleAt(f *fakeState, name string, now time.Time) *api.Plan {
	return Schedule(f, &api.Evaluation{ID: "eval-" + name, Workload: name}, Options{Seed: 1, Now: now})
}

// failAt marks an allocation failed at a server time.
func failAt(f *fakeState, id string, at time.Time, reason string) {
	a := f.alloc(id).Copy()
	a.ClientStatus, a.ClientReason, a.ClientStatusTime = api.AllocFailed, reason, at
	f.putAlloc(a)
}

func liveAlloc(f *fakeState, name string) *api.Allocation {
	for _, a := range f.AllocsByWorkload(name) {
		if live(a) {
			return a
		}
	}
	return nil
}

// TestRestartNeverIsNotRescheduled reproduces defect 7: a failed
// allocation of a restartPolicy-never group was replaced three times at
// once and ended dead without a reason.
func TestRestartNeverIsNotRescheduled(t *testing.T) {
	f := threeNodes()
	g := taskGroup("g").cpu(1000)
	g.g.RestartPolicy.Mode = api.RestartNever
	g.g.Reschedule = nil // the defaults of restartPolicy never
	w := workload("once", g)
	deploy(t, f, w)
	failAt(f, liveAlloc(f, "once").ID, tNow, "task main: exit code 1")
	plan := scheduleAt(f, "once", tNow)
	mustEqual(t, "no replacement", len(plan.Place), 0)
	mustEqual(t, "no follow-up", len(plan.FollowUps), 0)
	stops := planStops(plan)
	mustEqual(t, "one stop that says why", len(stops) == 1 && strings.HasSuffix(stops[0], ":restartPolicy never and reschedule disabled"), true)
}

// TestRescheduleDelayFollowUp: a failed allocation is replaced only after
// the policy's delay, through a follow-up evaluation due at that time;
// the delays grow exponentially and the fourth failure within the
// interval ends the replica with a reason.
func TestRescheduleDelayFollowUp(t *testing.T) {
	f := threeNodes()
	g := taskGroup("g").cpu(1000)
	g.g.Reschedule = &api.ReschedulePolicy{Attempts: 3, Interval: time.Hour, Delay: 10 * time.Second,
		DelayFunction: api.DelayExponential, MaxDelay: time.Minute}
	deploy(t, f, workload("job", g))
	failedAt := tNow
	for i, wantDelay := range []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second} {
		failAt(f, liveAlloc(f, "job").ID, failedAt, "task main: exit code 1")
		early := scheduleAt(f, "job", failedAt.Add(time.Second))
		mustEqual(t, "nothing placed before the delay", len(early.Place), 0)
		mustEqual(t, "one follow-up", len(early.FollowUps), 1)
		fu := early.FollowUps[0]
		mustEqual(t, "follow-up due after the delay", fu.WaitUntil, failedAt.Add(wantDelay))
		mustEqual(t, "follow-up trigger", fu.TriggeredBy, api.TriggerFollowUp)
		again := scheduleAt(f, "job", failedAt.Add(2*time.Second))
		mustEqual(t, "the same follow-up id (stored once)", again.FollowUps[0].ID, fu.ID)
		due := Schedule(f, fu, Options{Seed: int64(i), Now: fu.WaitUntil})
		mustEqual(t, "replacement placed when due", len(planAllocs(due)), 1)
		f.apply(due, true)
		failedAt = fu.WaitUntil.Add(time.Minute)
	}
	failAt(f, liveAlloc(f, "job").ID, failedAt, "task main: exit code 1")
	dead := scheduleAt(f, "job", failedAt)
	mustEqual(t, "no fourth replacement", len(dead.Place)+len(dead.FollowUps), 0)
	mustEqual(t, "reason", strings.HasSuffix(planStops(dead)[0], ":reschedule attempts exhausted: 3 in 1h"), true)
	// Past the interval, the budget is back.
	later := scheduleAt(f, "job", failedAt.Add(2*time.Hour))
	mustEqual(t, "replaced once the interval passed", len(planAllocs(later)), 1)
}

// TestFencedIsReplacedAtOnce: a copy its agent fenced (lease lapsed) is
// replaced at once and not counted as a failure.
func TestFencedIsReplacedAtOnce(t *testing.T) {
	f := threeNodes()
	g := taskGroup("g").cpu(1000)
	g.g.Reschedule = &api.ReschedulePolicy{} // disabled: only fencing can replace
	deploy(t, f, workload("amo", g))
	failAt(f, liveAlloc(f, "amo").ID, tNow, "task main: "+api.ReasonFenced+" (no heartbeat answered for 10s)")
	plan := scheduleAt(f, "amo", tNow)
	mustEqual(t, "replaced", len(planAllocs(plan)), 1)
}

// downNode marks n down, last heard at seen with lease.
func downNode(f *fakeState, id string, seen time.Time, lease time.Duration) {
	n := f.Node(id)
	n.Status, n.LastHeartbeat, n.LeaseTTL = api.NodeDown, seen, lease
}

func TestDisconnect(t *testing.T) {
	const ttl = 10 * time.Second
	seen := tNow.Add(-ttl) // the node went down at tNow
	grace := 5 * time.Second
	amoSafe := lease.ServerReplaceAfter(lease.Defaults(), seen, ttl, grace)
	tests := []struct {
		name       string
		policy     *api.DisconnectPolicy
		atMostOnce bool
		now        time.Time
		wantPlace  int
		wantLost   bool
		wantFollow time.Time
	}{
		{"default: lost at once and replaced", nil, false, tNow, 1, true, time.Time{}},
		{"unknown for lostAfter, replaced meanwhile", &api.DisconnectPolicy{LostAfter: time.Minute, Replace: true, Reconcile: api.KeepReplacement},
			false, tNow, 1, false, tNow.Add(time.Minute)},
		{"unknown for lostAfter, not replaced", &api.DisconnectPolicy{LostAfter: time.Minute, Reconcile: api.KeepOriginal},
			false, tNow, 0, false, tNow.Add(time.Minute)},
		{"lostAfter over: lost and replaced", &api.DisconnectPolicy{LostAfter: time.Minute, Reconcile: api.KeepOriginal},
			false, tNow.Add(time.Minute), 1, true, time.Time{}},
		{"at most once: held until the lease surely expired", nil, true, amoSafe.Add(-time.Millisecond), 0, false, amoSafe},
		{"at most once: replaced after", nil, true, amoSafe, 1, true, time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := threeNodes()
			g := taskGroup("g").cpu(1000)
			g.g.Disconnect, g.g.AtMostOnce = tt.policy, tt.atMostOnce
			g.g.Tasks[0].KillTimeout = grace
			deploy(t, f, workload("w", g))
			orig := liveAlloc(f, "w")
			downNode(f, orig.NodeID, seen, ttl)
			plan := scheduleAt(f, "w", tt.now)
			mustEqual(t, "placements", len(planAllocs(plan)), tt.wantPlace)
			mustEqual(t, "original lost", slices.Contains(planStops(plan), orig.ID+":node down:lost"), tt.wantLost)
			var follow time.Time
			if len(plan.FollowUps) > 0 {
				follow = plan.FollowUps[0].WaitUntil
			}
			mustEqual(t, "follow-up", follow, tt.wantFollow)
		})
	}
}

// TestReconnectServerChoiceWins: the node of an unknown, replaced copy
// returns; the group's reconcile choice decides which copy stops.
func TestReconnectServerChoiceWins(t *testing.T) {
	for _, choice := range []string{api.KeepOriginal, api.KeepReplacement} {
		t.Run(choice, func(t *testing.T) {
			f := threeNodes()
			g := taskGroup("g").cpu(1000)
			g.g.Disconnect = &api.DisconnectPolicy{LostAfter: time.Hour, Replace: true, Reconcile: choice}
			deploy(t, f, workload("w", g))
			orig := liveAlloc(f, "w")
			downNode(f, orig.NodeID, tNow.Add(-10*time.Second), 10*time.Second)
			plan := scheduleAt(f, "w", tNow)
			f.apply(plan, false)
			repl := planAllocs(plan)[0]
			mustEqual(t, "replacement names the original", repl.PreviousAlloc, orig.ID)
			f.setClient(repl.ID, api.AllocRunning)
			f.Node(orig.NodeID).Status = api.NodeReady // heartbeat resumed
			back := scheduleAt(f, "w", tNow.Add(time.Minute))
			loser := repl.ID
			if choice == api.KeepReplacement {
				loser = orig.ID
			}
			mustEqual(t, "stops", strings.Join(planStops(back), ","), loser+":"+reasonDuplicate)
			mustEqual(t, "places", len(back.Place), 0)
		})
	}
}
