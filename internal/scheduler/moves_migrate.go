package scheduler

import "github.com/strata-dev/strata/api"

// CheckpointableDrivers are the task drivers whose tasks a node with a
// working criu can checkpoint and restore (docs/migration.md).
var CheckpointableDrivers = map[string]bool{"": true, "exec": true}

// DrainMigrates reports whether drain moves allocation a off its node n by
// live migration rather than by stop-and-replace: a runs, every task's
// driver checkpoints, n can checkpoint, a holds no exclusive cores, GPUs
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
	if n.Checkpoint == nil || !n.Checkpoint.Available || !n.Checkpoint.KeepsMemory {
		return false // a move would be a stop-and-restart: a replacement beside it is better
	}
	for _, t := range a.TaskGroup.Tasks {
		if !CheckpointableDrivers[t.Driver] {
			return false
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
