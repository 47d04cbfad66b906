package trigger

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/state"
)

var now = time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)

// fixedMaker stamps now and numbers its ids.
func fixedMaker() *Maker {
	n := 0
	return &Maker{Now: func() time.Time { return now }, NewID: func() string { n++; return fmt.Sprintf("id-%d", n) }}
}

func alloc(id, workload, node, client string) *api.Allocation {
	return &api.Allocation{ID: id, Workload: workload, Group: "g", NodeID: node, Priority: 50,
		DesiredStatus: api.DesiredRun, ClientStatus: client, Resources: api.Resources{CPUMilli: 100}}
}

// cell stores allocs on a node n1, and a running deployment of "rolling".
func cell(t *testing.T, allocs ...*api.Allocation) *state.Snapshot {
	t.Helper()
	st := state.New()
	if err := st.Write(1, func(w *state.WriteTxn) error {
		if err := w.UpsertNode(&api.Node{ID: "n1", Name: "n1", Status: api.NodeReady, Capacity: api.Resources{CPUMilli: 8000}}); err != nil {
			return err
		}
		for _, name := range []string{"web", "rolling"} {
			wl := &api.Workload{Name: name, Priority: 50, Groups: []*api.TaskGroup{{Name: "g", Replicas: 2}}}
			var d *api.Deployment
			if name == "rolling" {
				d = &api.Deployment{ID: "d1", Namespace: "default", Workload: name, Status: api.DeploymentRunning}
			}
			if err := w.RegisterWorkload(wl, d, now); err != nil {
				return err
			}
		}
		for _, a := range allocs {
			if err := w.UpsertAlloc(a); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return st.Snapshot()
}

// TestReports: the evaluations agents' reports cause, one per workload, for
// the first reason that holds; what moves backwards is refused; a report
// of nothing known is no command.
func TestReports(t *testing.T) {
	for _, tc := range []struct {
		name     string
		stored   []*api.Allocation
		updates  []*api.AllocUpdate
		draining []string
		want     []string // "workload: trigger"
		refused  int
		none     bool
	}{
		{name: "a failure is replaced", stored: []*api.Allocation{alloc("a1", "web", "n1", api.AllocRunning)},
			updates: []*api.AllocUpdate{{ID: "a1", ClientStatus: api.AllocFailed}}, want: []string{"web: " + api.TriggerAllocFailed}},
		{name: "two failures of one workload, one evaluation",
			stored:  []*api.Allocation{alloc("a1", "web", "n1", api.AllocRunning), alloc("a2", "web", "n1", api.AllocRunning)},
			updates: []*api.AllocUpdate{{ID: "a1", ClientStatus: api.AllocFailed}, {ID: "a2", ClientStatus: api.AllocFailed}},
			want:    []string{"web: " + api.TriggerAllocFailed}},
		{name: "a deployment moves on", stored: []*api.Allocation{alloc("r1", "rolling", "n1", api.AllocPending)},
			updates: []*api.AllocUpdate{{ID: "r1", ClientStatus: api.AllocRunning}}, want: []string{"rolling: " + api.TriggerDeployment}},
		{name: "a replica up lets a drain move on", stored: []*api.Allocation{alloc("a1", "web", "n1", api.AllocPending)},
			updates: []*api.AllocUpdate{{ID: "a1", ClientStatus: api.AllocRunning}}, draining: []string{"default/web"},
			want: []string{"web: " + api.TriggerNodeDrain}},
		{name: "running, nothing to move", stored: []*api.Allocation{alloc("a1", "web", "n1", api.AllocPending)},
			updates: []*api.AllocUpdate{{ID: "a1", ClientStatus: api.AllocRunning}}},
		{name: "backwards is refused", stored: []*api.Allocation{alloc("a1", "web", "n1", api.AllocComplete)},
			updates: []*api.AllocUpdate{{ID: "a1", ClientStatus: api.AllocRunning}}, refused: 1, none: true},
		{name: "unknown allocations are dropped", updates: []*api.AllocUpdate{{ID: "gone", ClientStatus: api.AllocFailed}}, none: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := cell(t, tc.stored...)
			cmd, refused := fixedMaker().Reports(snap, tc.updates, func(w string) bool { return slices.Contains(tc.draining, w) })
			if len(refused) != tc.refused {
				t.Fatalf("refused %v, want %d", refused, tc.refused)
			}
			if tc.none {
				if cmd != nil {
					t.Fatalf("command %+v, want none", cmd)
				}
				return
			}
			var got []string
			for _, e := range cmd.Evals {
				if e.Status != api.EvalPending || !e.CreateTime.Equal(now) || e.NodeID != "n1" {
					t.Fatalf("evaluation %+v: want pending, stamped now, for node n1", e)
				}
				got = append(got, e.Workload+": "+e.TriggeredBy)
			}
			if !slices.Equal(got, tc.want) || !cmd.Time.Equal(now) {
				t.Fatalf("evaluations %v at %v, want %v", got, cmd.Time, tc.want)
			}
		})
	}
}

// TestForAllocsAndPreempted: one evaluation per workload with live
// allocations; a plan's own workload is not re-evaluated for its
// preemptions.
func TestForAllocsAndPreempted(t *testing.T) {
	m := fixedMaker()
	done := alloc("x", "batch", "n1", api.AllocComplete)
	done.DesiredStatus = api.DesiredStop
	allocs := []*api.Allocation{alloc("a", "web", "n1", api.AllocRunning), alloc("b", "web", "n1", api.AllocRunning), done,
		alloc("c", "db", "n1", api.AllocRunning)}
	var got []string
	for _, e := range m.ForAllocs(allocs, api.TriggerNodeDown, "n1") {
		got = append(got, e.Workload)
	}
	if !slices.Equal(got, []string{"web", "db"}) {
		t.Fatalf("node's evaluations for %v, want web and db", got)
	}
	got = nil
	for _, e := range m.Preempted("default", "web", allocs) {
		got = append(got, e.Workload+": "+e.TriggeredBy)
	}
	if !slices.Equal(got, []string{"batch: " + api.TriggerPreemption, "db: " + api.TriggerPreemption}) {
		t.Fatalf("preemptions' evaluations %v", got)
	}
}
