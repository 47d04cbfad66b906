package scheduler

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
)

// TestDrainLeavesMigrationsToTheDrainer: allocations a drain can migrate
// are not stopped and replaced (the drainer migrates them), a migration in
// flight spends the group's budget like a move in flight, and one that
// failed during the drain falls back to stop-and-replace.
func TestDrainLeavesMigrationsToTheDrainer(t *testing.T) {
	inDrain := drainNow.Add(time.Second)
	move := func(outcome string, at time.Time) *api.Migration {
		return &api.Migration{ID: "m-" + outcome, Kind: api.MigrationMove, SourceNode: "a", TargetNode: "b",
			RequestedAt: at, Outcome: outcome}
	}
	tests := []struct {
		name         string
		driver       string
		checkpoint   bool // node a can checkpoint
		budget       int
		migration    *api.Migration // of old-00
		exclusiveCPU bool           // old-00 holds cores
		want         string
		keeps        []string // drivers node a keeps the memory of; default exec and containerd
	}{
		{"migratable allocations are the drainer's", "exec", true, 1, nil, false, "place [] stop []", nil},
		{"a driver that cannot checkpoint moves by stop-and-replace", "mock", true, 1, nil, false, "place [0] stop []", nil},
		{"a node that cannot checkpoint moves by stop-and-replace", "exec", false, 1, nil, false, "place [0] stop []", nil},
		{"a migration in flight spends the budget", "exec", false, 1, move("", inDrain), false, "place [] stop []", nil},
		{"a migration in flight counts once against a larger budget", "exec", false, 2, move("", inDrain), false, "place [1] stop []", nil},
		{"a migration aborted during the drain falls back", "exec", true, 1, move(api.MigrationAborted, inDrain), false, "place [0] stop []", nil},
		{"a migration aborted before the drain is tried again", "exec", true, 1, move(api.MigrationAborted, drainNow.Add(-time.Minute)), false, "place [] stop []", nil},
		{"exclusive cores move by stop-and-replace", "exec", true, 1, nil, true, "place [0] stop []", nil},
		{"a node whose moves would not keep memory replaces", "exec", true, 1, nil, false, "place [0] stop []", []string{}},
		{"containerd tasks are the drainer's", "containerd", true, 1, nil, false, "place [] stop []", nil},
		{"containerd tasks where its runc has no criu are replaced", "containerd", true, 1, nil, false, "place [0] stop []", []string{"exec"}},
		{"exec tasks where only containerd keeps memory are replaced", "exec", true, 1, nil, false, "place [0] stop []", []string{"containerd"}},
		{"a replica offering a service is replaced, not migrated", "exec", true, 1, nil, false, "place [0] stop []", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tg := taskGroup("g").replicas(3).cpu(1000)
			tg.task().Driver = tt.driver
			tg.g.Disruption = budget(tt.budget)
			if strings.Contains(tt.name, "offering a service") {
				tg.g.Services = []api.Service{{Name: "web", Port: "http"}}
			}
			w := workload("w", tg)
			f := drainRig(t, w, 3)
			for _, id := range []string{"a", "b", "c"} {
				f.Node(id).Drivers = []string{"containerd", "exec", "mock"}
			}
			if tt.checkpoint {
				keeps := tt.keeps
				if keeps == nil {
					keeps = []string{"containerd", "exec"}
				}
				f.Node("a").Checkpoint = &api.NodeCheckpoint{Available: true, Drivers: keeps}
			}
			old := f.alloc("old-00")
			old.Migration = tt.migration
			if tt.exclusiveCPU {
				old.Assignment.CPUs = []int{0}
			}
			drainNode(f, "a", drainNow.Add(time.Hour), false)
			plan := drainPlanAt(f, "w", inDrain)
			var idx []int
			for _, a := range planAllocs(plan) {
				idx = append(idx, a.Index)
			}
			mustEqual(t, "plan", fmt.Sprintf("place %v stop %v", idxOrEmpty(idx), planStops(plan)), tt.want)
		})
	}
}

// TestDrainDeadlineStopsMigrationsInFlight: at the deadline an allocation
// whose migration is still in flight is stopped and replaced like the
// rest.
func TestDrainDeadlineStopsMigrationsInFlight(t *testing.T) {
	tg := taskGroup("g").replicas(2).cpu(1000)
	tg.task().Driver = "exec"
	w := workload("w", tg)
	f := drainRig(t, w, 2)
	f.Node("a").Checkpoint = &api.NodeCheckpoint{Available: true, Drivers: []string{"exec"}}
	f.alloc("old-00").Migration = &api.Migration{ID: "m1", Kind: api.MigrationMove, SourceNode: "a", TargetNode: "b", RequestedAt: drainNow}
	drainNode(f, "a", drainNow.Add(time.Minute), false)
	plan := drainPlanAt(f, "w", drainNow.Add(time.Minute))
	mustEqual(t, "stops", fmt.Sprint(planStops(plan)), "[old-00:node drain deadline old-01:node drain deadline]")
	mustEqual(t, "placed", len(planAllocs(plan)), 2)
}
