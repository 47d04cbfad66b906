package scheduler

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"pgregory.net/rapid"
)

var drainNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// drainRig is a cell of one node to drain ("a") and two that take work.
func drainRig(t *testing.T, w *api.Workload, onA int) *fakeState {
	t.Helper()
	f := newFake(node("a").cpu(64000).mem("64Gi"), node("b").cpu(64000).mem("64Gi"), node("c").cpu(64000).mem("64Gi"))
	f.putWorkload(w)
	for i := range onA {
		f.putAlloc(&api.Allocation{ID: fmt.Sprintf("old-%02d", i), Workload: w.Name, Group: w.Groups[0].Name, Index: i,
			NodeID: "a", WorkloadVersion: w.Version, Priority: w.Priority, TaskGroup: w.Groups[0],
			Resources: w.Groups[0].Resources(), DesiredStatus: api.DesiredRun, ClientStatus: api.AllocRunning})
	}
	return f
}

func drainNode(f *fakeState, id string, deadline time.Time, keepSystem bool) {
	n := f.Node(id)
	n.Status, n.Eligibility = api.NodeDraining, api.NodeIneligible
	n.Drain = &api.DrainSpec{StartedAt: drainNow, Deadline: deadline, KeepSystem: keepSystem}
}

// drainPlanAt schedules at now with a fresh IDNonce per call (as the
// server draws one per attempt), so successive plans never reuse ids.
func drainPlanAt(f *fakeState, name string, now time.Time) *api.Plan {
	f.index++
	return Schedule(f, &api.Evaluation{ID: "eval-" + name, Workload: name}, Options{Seed: 1, Now: now, IDNonce: f.index})
}

// runPending reports every pending live allocation running, as agents would.
func runPending(f *fakeState) {
	for _, a := range slices.Clone(f.allocs) {
		if a.ClientStatus == api.AllocPending && a.DesiredStatus == api.DesiredRun {
			f.setClient(a.ID, api.AllocRunning)
		}
	}
}

func budget(n int) *api.DisruptionPolicy { return &api.DisruptionPolicy{MaxUnavailable: n} }

// TestDrainMovesUnderBudget walks drains step by step: each plan starts at
// most maxUnavailable moves, places the replacement before it stops the
// old allocation, and stops the old one only once the replacement runs.
func TestDrainMovesUnderBudget(t *testing.T) {
	tests := []struct {
		name     string
		replicas int
		budget   *api.DisruptionPolicy
		wantStep []string // per step: placements (on which index) and stops
	}{
		{"default budget moves one at a time", 3, nil, []string{
			"place [0] stop []", "place [] stop []", "place [1] stop [old-00:moved: its replacement runs]",
			"place [] stop []", "place [2] stop [old-01:moved: its replacement runs]", "place [] stop []",
			"place [] stop [old-02:moved: its replacement runs]", "place [] stop []"}},
		{"budget of two", 3, budget(2), []string{
			"place [0 1] stop []", "place [] stop []",
			"place [2] stop [old-00:moved: its replacement runs old-01:moved: its replacement runs]", "place [] stop []",
			"place [] stop [old-02:moved: its replacement runs]"}},
		{"budget zero waits for the deadline", 2, budget(0), []string{"place [] stop []", "place [] stop []"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tg := taskGroup("g").replicas(tt.replicas).cpu(1000)
			tg.g.Disruption = tt.budget
			w := workload("w", tg)
			f := drainRig(t, w, tt.replicas)
			drainNode(f, "a", drainNow.Add(time.Hour), false)
			for step, want := range tt.wantStep {
				plan := drainPlanAt(f, "w", drainNow)
				var idx []int
				for _, a := range planAllocs(plan) {
					idx = append(idx, a.Index)
					if a.NodeID == "a" {
						t.Fatalf("step %d placed on the draining node", step)
					}
					if !strings.HasPrefix(a.PreviousAlloc, "old-") {
						t.Fatalf("step %d: replacement %s replaces %q, want an allocation of node a", step, a.ID, a.PreviousAlloc)
					}
				}
				mustEqual(t, fmt.Sprint("step ", step), fmt.Sprintf("place %v stop %v", idxOrEmpty(idx), planStops(plan)), want)
				f.apply(plan, true)
				// Agents start what was placed only on odd steps, so every
				// plan in between sees replacements still pending.
				if step%2 == 1 || len(plan.Place) == 0 {
					runPending(f)
				}
			}
		})
	}
}

func idxOrEmpty(idx []int) []int {
	if idx == nil {
		return []int{}
	}
	return idx
}

// TestDrainDeadlineStopsTheRest: past the deadline, what is left on the
// node is stopped and replaced at once, moves in flight included.
func TestDrainDeadlineStopsTheRest(t *testing.T) {
	w := workload("w", taskGroup("g").replicas(3).cpu(1000))
	f := drainRig(t, w, 3)
	drainNode(f, "a", drainNow.Add(time.Minute), false)
	f.apply(drainPlanAt(f, "w", drainNow), false) // one move in flight, its replacement pending
	plan := drainPlanAt(f, "w", drainNow.Add(time.Minute))
	mustEqual(t, "stops", fmt.Sprint(planStops(plan)),
		"[old-00:node drain deadline old-01:node drain deadline old-02:node drain deadline]")
	mustEqual(t, "placed", len(planAllocs(plan)), 2) // index 0 already has its replacement
}

// TestDrainKeepsWhatItShould: system workloads stay under keepSystem, and
// no move starts while the group is already short of its budget.
func TestDrainKeepsWhatItShould(t *testing.T) {
	t.Run("keepSystem leaves system workloads", func(t *testing.T) {
		w := workload("sys", taskGroup("g").replicas(2).cpu(100))
		w.PriorityClass = api.PrioritySystem
		f := drainRig(t, w, 2)
		drainNode(f, "a", drainNow.Add(time.Minute), true)
		for _, now := range []time.Time{drainNow, drainNow.Add(time.Hour)} {
			plan := drainPlanAt(f, "sys", now)
			mustEqual(t, "placed", len(plan.Place), 0)
			mustEqual(t, "stopped", len(plan.Stop), 0)
		}
	})
	t.Run("a group already short waits", func(t *testing.T) {
		w := workload("w", taskGroup("g").replicas(3).cpu(1000))
		f := drainRig(t, w, 2) // replica 2 is not running anywhere yet
		drainNode(f, "a", drainNow.Add(time.Hour), false)
		plan := drainPlanAt(f, "w", drainNow)
		got := planAllocs(plan)
		mustEqual(t, "placed", len(got), 1)
		mustEqual(t, "only the missing replica", got[0].Index, 2)
		mustEqual(t, "not a move", got[0].PreviousAlloc, "")
		f.apply(plan, true)
		mustEqual(t, "still pending: no move", len(drainPlanAt(f, "w", drainNow).Place), 0)
		runPending(f)
		mustEqual(t, "running: one move", len(drainPlanAt(f, "w", drainNow).Place), 1)
	})
	t.Run("a cancelled drain moves nothing more", func(t *testing.T) {
		w := workload("w", taskGroup("g").replicas(2).cpu(1000))
		f := drainRig(t, w, 2)
		mustEqual(t, "placed", len(drainPlanAt(f, "w", drainNow).Place), 0)
	})
}

// TestEarlierIncarnationIsNeverAdopted: allocations of a purged workload
// (created before the workload of the same name was registered again) are
// stopped, never counted as the new workload's replicas.
func TestEarlierIncarnationIsNeverAdopted(t *testing.T) {
	w := workload("w", taskGroup("g").replicas(1).cpu(1000))
	f := drainRig(t, w, 1) // old-00, same name, group and version, running
	w2 := workload("w", taskGroup("g").replicas(1).cpu(1000))
	w2.CreateIndex = f.index + 1
	f.putWorkload(w2)
	plan := drainPlanAt(f, "w", drainNow)
	mustEqual(t, "stops", fmt.Sprint(planStops(plan)), "[old-00:workload purged]")
	got := planAllocs(plan)
	mustEqual(t, "placed", len(got), 1)
	mustEqual(t, "fresh replica", got[0].PreviousAlloc, "")
}

// TestPropertyDrainRespectsBudget drains random nodes of a random cell
// while agents start, fail or lag at random, and checks after every plan
// that no group has more replicas moving than its budget, and that a move
// stops its old allocation only once its replacement runs (before the
// deadline): voluntary disruption never takes more than maxUnavailable
// replicas of a group out of service.
func TestPropertyDrainRespectsBudget(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		nodes := rapid.IntRange(2, 6).Draw(t, "nodes")
		var nbs []*nodeBuilder
		for i := range nodes {
			nbs = append(nbs, node(fmt.Sprint("n", i)).cpu(8000).mem("64Gi"))
		}
		f := newFake(nbs...)
		w := workload("w")
		for gi := range rapid.IntRange(1, 2).Draw(t, "groups") {
			g := taskGroup(fmt.Sprint("g", gi)).replicas(rapid.IntRange(1, 8).Draw(t, "replicas")).cpu(1000)
			if rapid.Bool().Draw(t, "hasBudget") {
				g.g.Disruption = budget(rapid.IntRange(0, 3).Draw(t, "maxUnavailable"))
			}
			w.Groups = append(w.Groups, g.g)
		}
		f.putWorkload(w)
		// Settle: everything placed and running.
		for range 3 {
			f.apply(drainPlanAt(f, "w", drainNow), true)
			runPending(f)
		}
		for i := range nodes {
			if rapid.IntRange(0, 2).Draw(t, fmt.Sprint("drain", i)) == 0 {
				drainNode(f, fmt.Sprint("n", i), drainNow.Add(time.Hour), false)
			}
		}
		for step := range 12 {
			plan := drainPlanAt(f, "w", drainNow)
			byID := map[string]*api.Allocation{}
			for _, a := range f.allocs {
				byID[a.ID] = a
			}
			for _, ss := range plan.Stop {
				for _, s := range ss {
					if s.Reason != reasonMoved {
						continue
					}
					old := byID[s.AllocID]
					ok := false
					for _, a := range f.allocs {
						ok = ok || (a.PreviousAlloc == old.ID && serving(a))
					}
					if !ok {
						t.Fatalf("step %d: %s stopped as moved without a running replacement", step, old.ID)
					}
				}
			}
			f.apply(plan, true)
			for _, g := range w.Groups {
				moving := 0
				for _, a := range f.allocs {
					if a.Group != g.Name || !live(a) || f.Node(a.NodeID).Drain == nil {
						continue
					}
					for _, b := range f.allocs {
						if b.PreviousAlloc == a.ID && live(b) {
							moving++
							break
						}
					}
				}
				if limit := maxUnavailableOf(g); moving > limit {
					t.Fatalf("step %d: group %s has %d replicas moving, budget %d", step, g.Name, moving, limit)
				}
			}
			for _, a := range slices.Clone(f.allocs) {
				if a.ClientStatus != api.AllocPending || a.DesiredStatus != api.DesiredRun {
					continue
				}
				switch rapid.IntRange(0, 5).Draw(t, "agent") {
				case 0:
					f.setClient(a.ID, api.AllocFailed)
				case 1, 2:
					// lags
				default:
					f.setClient(a.ID, api.AllocRunning)
				}
			}
		}
	})
}

func maxUnavailableOf(g *api.TaskGroup) int {
	if g.Disruption == nil {
		return 1
	}
	return g.Disruption.MaxUnavailable
}

// TestDrainOfAtMostOnceStopsFirst: a group that promises at most one copy
// of a replica is moved stop-then-place, one replica at a time under the
// default budget: its replacement is placed only after the old copy
// reported stopped.
func TestDrainOfAtMostOnceStopsFirst(t *testing.T) {
	tg := taskGroup("g").replicas(2).cpu(1000)
	tg.g.AtMostOnce = true
	w := workload("w", tg)
	f := drainRig(t, w, 2)
	drainNode(f, "a", drainNow.Add(time.Hour), false)

	plan := drainPlanAt(f, "w", drainNow)
	mustEqual(t, "first plan", fmt.Sprintf("place %d stop %v", len(plan.Place), planStops(plan)), "place 0 stop [old-00:moved off a draining node]")
	f.apply(plan, false) // the agent has not stopped it yet
	plan = drainPlanAt(f, "w", drainNow)
	mustEqual(t, "while the old copy runs", fmt.Sprintf("place %d stop %d", len(plan.Place), len(plan.Stop)), "place 0 stop 0")
	f.setClient("old-00", api.AllocComplete)
	plan = drainPlanAt(f, "w", drainNow)
	got := planAllocs(plan)
	mustEqual(t, "placed once stopped", len(got), 1)
	mustEqual(t, "index", got[0].Index, 0)
	mustEqual(t, "stops", len(plan.Stop), 0) // replica 1 waits: replica 0 is not serving yet
	f.apply(plan, true)
	runPending(f)
	plan = drainPlanAt(f, "w", drainNow)
	mustEqual(t, "next move", fmt.Sprintf("place %d stop %v", len(plan.Place), planStops(plan)), "place 0 stop [old-01:moved off a draining node]")
}

// TestDrainOfAtMostOnceOnANodeThatWentDown: an at-most-once copy told to
// stop by a move whose node then went silent is replaced only once the
// node's lease has surely ended, as any silent copy.
func TestDrainOfAtMostOnceOnANodeThatWentDown(t *testing.T) {
	tg := taskGroup("g").replicas(1).cpu(1000)
	tg.g.AtMostOnce = true
	w := workload("w", tg)
	f := drainRig(t, w, 1)
	drainNode(f, "a", drainNow.Add(time.Hour), false)
	f.apply(drainPlanAt(f, "w", drainNow), false) // old-00 told to stop
	a := f.Node("a")
	a.Status, a.LastHeartbeat, a.LeaseTTL = api.NodeDown, drainNow, 10*time.Second
	mustEqual(t, "placed while the lease may hold", len(drainPlanAt(f, "w", drainNow.Add(5*time.Second)).Place), 0)
	mustEqual(t, "placed once it surely ended", len(drainPlanAt(f, "w", drainNow.Add(10*time.Minute)).Place), 1)
}
