package scheduler

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
)

// deploy schedules w on f, commits the plan and marks the allocations running.
func deploy(t *testing.T, f *fakeState, w *api.Workload) []*api.Allocation {
	t.Helper()
	f.putWorkload(w)
	plan := schedule(f, w.Name, 42)
	if len(plan.Failures) > 0 {
		t.Fatalf("deploy %s: %s", w.Name, plan.Failures[0].Summary)
	}
	f.apply(plan, true)
	placed := planAllocs(plan)
	for _, a := range placed {
		f.setClient(a.ID, api.AllocRunning)
	}
	return placed
}

func threeNodes() *fakeState {
	return newFake(node("n1").cpu(8000).mem("16Gi"), node("n2").cpu(8000).mem("16Gi"), node("n3").cpu(8000).mem("16Gi"))
}

func indices(allocs []*api.Allocation) []int {
	var out []int
	for _, a := range allocs {
		out = append(out, a.Index)
	}
	return out
}

func TestScheduleFillsNewAllocation(t *testing.T) {
	f := newFake(node("n1").cpu(8000).mem("16Gi").numa(0, "8Gi", cpus(0, 8)...))
	w := workload("web", taskGroup("g").replicas(2).cpu(2500).mem("1Gi").exclusive())
	w.Priority, w.Version = 70, 4
	f.putWorkload(w)
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	plan := Schedule(f, &api.Evaluation{ID: "e1", Workload: "web", Priority: 1}, Options{Seed: 9, Now: now})
	mustEqual(t, "plan priority", plan.Priority, 70)
	mustEqual(t, "snapshot index", plan.SnapshotIndex, f.index)
	mustEqual(t, "eval", plan.EvalID, "e1")
	placed := planAllocs(plan)
	mustEqual(t, "indices", slices.Equal(indices(placed), []int{0, 1}), true)
	a := placed[0]
	mustEqual(t, "workload", a.Workload, "web")
	mustEqual(t, "group", a.Group, "g")
	mustEqual(t, "node name", a.NodeName, a.NodeID)
	mustEqual(t, "version", a.WorkloadVersion, uint64(4))
	mustEqual(t, "priority", a.Priority, 70)
	mustEqual(t, "task group", a.TaskGroup, w.Groups[0])
	mustEqual(t, "charged whole cores", a.Resources.CPUMilli, int64(3000))
	mustEqual(t, "desired", a.DesiredStatus, api.DesiredRun)
	mustEqual(t, "client", a.ClientStatus, api.AllocPending)
	mustEqual(t, "create time", a.CreateTime, now)
	mustEqual(t, "uuid length", len(a.ID), 36)
}

func TestReconcile(t *testing.T) {
	type want struct {
		stops   []string // "index:reason[:lost]"
		place   []int
		prevOf  map[int]int // new index → index of the allocation it replaces
		noPlace bool
		inPlace int // allocations moved to the new version without a restart
	}
	tests := []struct {
		name   string
		setup  func(t *testing.T, f *fakeState, w *api.Workload, running []*api.Allocation)
		change func(w *api.Workload)
		want   want
	}{
		{
			name:   "scale up",
			change: func(w *api.Workload) { w.Groups[0].Replicas = 5 },
			want:   want{place: []int{3, 4}},
		},
		{
			name:   "scale down",
			change: func(w *api.Workload) { w.Groups[0].Replicas = 1 },
			want:   want{stops: []string{"1:scaled down", "2:scaled down"}},
		},
		{
			name:   "stopped workload",
			change: func(w *api.Workload) { w.Stopped = true },
			want:   want{stops: []string{"0:workload stopped", "1:workload stopped", "2:workload stopped"}},
		},
		{
			name:   "group removed",
			change: func(w *api.Workload) { w.Groups[0] = taskGroup("other").cpu(100).g },
			want:   want{stops: []string{"0:group removed", "1:group removed", "2:group removed"}, place: []int{0}},
		},
		{
			name: "node down: lost and replaced elsewhere",
			setup: func(t *testing.T, f *fakeState, w *api.Workload, running []*api.Allocation) {
				f.Node(running[1].NodeID).Status = api.NodeDown
			},
			want: want{stops: []string{"1:node down:lost"}, place: []int{1}, prevOf: map[int]int{1: 1}},
		},
		{
			name: "node gone: lost and replaced",
			setup: func(t *testing.T, f *fakeState, w *api.Workload, running []*api.Allocation) {
				f.nodes = slices.DeleteFunc(f.nodes, func(n *api.Node) bool { return n.ID == running[2].NodeID })
			},
			want: want{stops: []string{"2:node down:lost"}, place: []int{2}, prevOf: map[int]int{2: 2}},
		},
		{
			name: "draining node keeps its allocations",
			setup: func(t *testing.T, f *fakeState, w *api.Workload, running []*api.Allocation) {
				f.Node(running[0].NodeID).Status = api.NodeDraining
			},
			want: want{},
		},
		{
			name: "failed allocation replaced",
			setup: func(t *testing.T, f *fakeState, w *api.Workload, running []*api.Allocation) {
				f.setClient(running[0].ID, api.AllocFailed)
			},
			want: want{place: []int{0}, prevOf: map[int]int{0: 0}},
		},
		{
			name: "completed allocation is finished",
			setup: func(t *testing.T, f *fakeState, w *api.Workload, running []*api.Allocation) {
				f.setClient(running[0].ID, api.AllocComplete)
			},
			want: want{},
		},
		{
			name: "destructive update",
			change: func(w *api.Workload) {
				w.Version = 2
				w.Groups[0] = taskGroup("g").replicas(3).cpu(1000).command("v2").g
			},
			// One replacement (maxParallel 1) beside the old copy, which
			// stops once it is healthy (rolling_test.go).
			want: want{place: []int{0}, prevOf: map[int]int{0: 0}},
		},
		{
			name: "version bump with the same spec stays in place",
			change: func(w *api.Workload) {
				w.Version = 2
				w.Groups[0] = taskGroup("g").replicas(3).cpu(1000).g // equal, but a new pointer
			},
			want: want{inPlace: 3},
		},
		{
			name:   "scaling is not a spec change",
			change: func(w *api.Workload) { w.Version = 2; w.Groups[0] = taskGroup("g").replicas(4).cpu(1000).g },
			want:   want{place: []int{3}, inPlace: 3},
		},
		{
			name: "priority, labels and update policy change in place",
			change: func(w *api.Workload) {
				w.Version, w.Priority, w.Labels = 2, 900, map[string]string{"team": "a"}
				w.Groups[0] = taskGroup("g").replicas(3).cpu(1000).g
				w.Groups[0].Update = &api.UpdatePolicy{MaxParallel: 3, MinHealthyTime: time.Second, HealthyDeadline: time.Minute}
				w.Groups[0].Disruption = &api.DisruptionPolicy{MaxUnavailable: 2}
			},
			want: want{inPlace: 3},
		},
		{
			name: "shutdownDelay changes in place: the agent reads it when it stops",
			change: func(w *api.Workload) {
				w.Version = 2
				w.Groups[0] = taskGroup("g").replicas(3).cpu(1000).g
				w.Groups[0].ShutdownDelay = 30 * time.Second
			},
			want: want{inPlace: 3},
		},
		{
			name: "duplicate index stopped",
			setup: func(t *testing.T, f *fakeState, w *api.Workload, running []*api.Allocation) {
				dup := running[1].Copy()
				dup.ID = "ffffffff-dup"
				f.putAlloc(dup)
			},
			want: want{stops: []string{"1:duplicate replica"}},
		},
		{
			name: "stopping allocation is not stopped again",
			setup: func(t *testing.T, f *fakeState, w *api.Workload, running []*api.Allocation) {
				a := running[2].Copy()
				a.DesiredStatus = api.DesiredStop
				f.putAlloc(a)
			},
			change: func(w *api.Workload) { w.Groups[0].Replicas = 2 },
			want:   want{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := threeNodes()
			w := workload("web", taskGroup("g").replicas(3).cpu(1000))
			w.SchedulingPolicy.Type = api.PolicySpread // one replica per node
			running := deploy(t, f, w)
			if tt.setup != nil {
				tt.setup(t, f, w, running)
			}
			if tt.change != nil {
				w2 := *w
				w2.Groups = slices.Clone(w.Groups)
				g := *w.Groups[0]
				w2.Groups[0] = &g
				tt.change(&w2)
				f.putWorkload(&w2)
			}
			plan := schedule(f, "web", 7)
			mustEqual(t, "failures", len(plan.Failures), 0)

			idByIndex := map[string]int{}
			for _, a := range f.allocs {
				idByIndex[a.ID] = a.Index
			}
			var stops []string
			for _, s := range planStops(plan) {
				id, rest, _ := cut(s)
				stops = append(stops, itoa(idByIndex[id])+":"+rest)
			}
			slices.Sort(stops)
			mustEqual(t, "stops", join(stops), join(tt.want.stops))
			mustEqual(t, "in place", len(plan.InPlace), tt.want.inPlace)
			placed := planAllocs(plan)
			mustEqual(t, "placed", join(intsToStrings(indices(placed))), join(intsToStrings(tt.want.place)))
			for _, a := range placed {
				if prev, ok := tt.want.prevOf[a.Index]; ok {
					mustEqual(t, "previous alloc index", idByIndex[a.PreviousAlloc], prev)
					mustEqual(t, "replaced alloc exists", a.PreviousAlloc != "", true)
					old := f.alloc(a.PreviousAlloc)
					if old.NodeID == a.NodeID && f.Node(old.NodeID) != nil && f.Node(old.NodeID).Status == api.NodeDown {
						t.Fatalf("replacement placed on the down node %s", a.NodeID)
					}
				} else {
					mustEqual(t, "previous alloc", a.PreviousAlloc, "")
				}
			}
		})
	}
}

func TestRescheduleChainLimit(t *testing.T) {
	tests := []struct {
		failures int // failed allocations in the chain, the newest included
		want     bool
	}{{1, true}, {2, true}, {3, true}, {4, false}}
	for _, tt := range tests {
		t.Run(itoa(tt.failures), func(t *testing.T) {
			f := threeNodes()
			w := workload("job", taskGroup("g").replicas(1).cpu(1000))
			deploy(t, f, w)
			for i := 0; ; i++ {
				cur := f.AllocsByWorkload("", "job")
				last := cur[slices.IndexFunc(cur, live)]
				f.setClient(last.ID, api.AllocFailed)
				if i+1 == tt.failures {
					break
				}
				plan := schedule(f, "job", int64(100+i))
				f.apply(plan, true)
			}
			plan := schedule(f, "job", 99)
			mustEqual(t, "replacement placed", len(planAllocs(plan)) == 1, tt.want)
			mustEqual(t, "no failure reported", len(plan.Failures), 0)
		})
	}
}

func TestNewVersionResetsRescheduleBudget(t *testing.T) {
	f := threeNodes()
	w := workload("job", taskGroup("g").replicas(1).cpu(1000))
	deploy(t, f, w)
	for i := range MaxReschedules + 1 {
		cur := f.AllocsByWorkload("", "job")
		f.setClient(cur[slices.IndexFunc(cur, live)].ID, api.AllocFailed)
		if i < MaxReschedules {
			f.apply(schedule(f, "job", int64(10+i)), true)
		}
	}
	spent := schedule(f, "job", 1)
	mustEqual(t, "budget spent: no placement", len(spent.Place), 0)
	stops := planStops(spent)
	mustEqual(t, "the dead replica says why", len(stops) == 1 && strings.HasSuffix(stops[0], ":reschedule attempts exhausted: 3 in 1h"), true)
	f.apply(spent, false) // the failed allocation stays failed, now desired stop
	mustEqual(t, "said once", schedule(f, "job", 2).IsNoOp(), true)
	w2 := *w
	w2.Version = 2
	f.putWorkload(&w2)
	mustEqual(t, "new version placed", len(planAllocs(schedule(f, "job", 1))), 1)
}

func TestFailuresInChainIgnoresLost(t *testing.T) {
	byID := map[string]*api.Allocation{
		"old": {ID: "old", ClientStatus: api.AllocFailed, WorkloadVersion: 1},
		"a":   {ID: "a", ClientStatus: api.AllocFailed, WorkloadVersion: 2, PreviousAlloc: "old"},
		"b":   {ID: "b", ClientStatus: api.AllocLost, WorkloadVersion: 2, PreviousAlloc: "a"},
		"c":   {ID: "c", ClientStatus: api.AllocFailed, WorkloadVersion: 2, PreviousAlloc: "b"},
		"x":   {ID: "x", ClientStatus: api.AllocFailed, WorkloadVersion: 2, PreviousAlloc: "y"},
		"y":   {ID: "y", ClientStatus: api.AllocFailed, WorkloadVersion: 2, PreviousAlloc: "x"}, // corrupt cycle
	}
	mustEqual(t, "chain c, version 2", failuresInChain(byID["c"], 2, byID), 2)
	mustEqual(t, "chain c, version 1", failuresInChain(byID["c"], 1, byID), 1)
	mustEqual(t, "cycle terminates", failuresInChain(byID["x"], 2, byID) > 0, true)
}

func TestScheduleIsIdempotentAfterApply(t *testing.T) {
	f := threeNodes()
	deploy(t, f, workload("web", taskGroup("g").replicas(6).cpu(1000), taskGroup("h").replicas(2).cpu(500)))
	plan := schedule(f, "web", 8)
	mustEqual(t, "no-op", plan.IsNoOp(), true)
}

func TestPurgedWorkloadStopsEverything(t *testing.T) {
	f := threeNodes()
	deploy(t, f, workload("web", taskGroup("g").replicas(2).cpu(1000)))
	delete(f.workloads, "web")
	plan := schedule(f, "web", 1)
	mustEqual(t, "stops", len(planStops(plan)), 2)
	mustEqual(t, "places", len(plan.Place), 0)
}
