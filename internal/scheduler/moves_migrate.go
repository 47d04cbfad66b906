package scheduler

import "github.com/strata-dev/strata/api"

// CheckpointableDrivers are the task drivers that can checkpoint and
// restore their tasks on a node with a working criu (docs/migration.md);
// whether a move keeps a task's memory is the node's to say
// (api.NodeCheckpoint.Drivers).
var CheckpointableDrivers = map[string]bool{"": true, "exec": true, "containerd": true}

// DrainMigrates reports whether drain moves allocation a off its node n by
// live migration rather than by stop-and-replace: a runs, its group offers
// no service (those are replaced, without a gap), n checkpoints
// every task's driver keeping its memory (api.NodeCheckpoint.Drivers), a holds no exclusive cores, GPUs
// or devices (their move is not supported), and no move of a from n was
// tried since the drain began (one that was tried and ended with a still
// on n failed or was aborted: a falls back to stop-and-replace, never
// twice). Whether some node can take the image is the drainer's to find
// out (internal/server/drainer_migrate.go); when none can, it records a
// failed attempt, and this answers false.
//
// The scheduler's mover leaves these allocations to the leader's drainer,
// which begins their migrations within the group's budget; a migration in
// flight counts as a move in flight (mover.plan).
func DrainMigrates(a *api.Allocation, n *api.Node, drain *api.DrainSpec) bool {
	if a == nil || n == nil || drain == nil || a.NodeID != n.ID || a.TaskGroup == nil {
		return false
	}
	if a.DesiredStatus != api.DesiredRun || a.ClientStatus != api.AllocRunning || a.TaskGroup.Gang != nil {
		return false
	}
	if len(a.TaskGroup.Tasks) == 0 {
		return false
	}
	if len(a.TaskGroup.Services) > 0 {
		// A replica that serves through the registry moves with no gap by
		// a replacement beside it (the registry shifts traffic, the old one
		// drains for shutdownDelay); a migration would refuse connections
		// for its downtime (TestDrainOfAServiceUnderTraffic: 133 of 5,783
		// requests refused when drains migrated services).
		return false
	}
	for _, t := range a.TaskGroup.Tasks {
		if !n.Checkpoint.KeepsMemoryOfTask(t, a.TaskStates[t.Name]) {
			return false // a move would be a stop-and-restart: a replacement beside it is better
		}
	}
	if len(a.Assignment.CPUs) > 0 || len(a.Assignment.GPUs) > 0 || a.Assignment.GPUMilli > 0 || len(a.Assignment.Devices) > 0 {
		return false
	}
	return !MigrationTriedInDrain(a, drain)
}

// MigrationTriedInDrain reports whether a move of a from its node began
// after drain started and ended without moving it (a is still there).
func MigrationTriedInDrain(a *api.Allocation, drain *api.DrainSpec) bool {
	m := a.Migration
	return m != nil && !m.Active() && m.Kind == api.MigrationMove && m.SourceNode == a.NodeID &&
		!m.RequestedAt.Before(drain.StartedAt)
}
