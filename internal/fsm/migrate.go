package fsm

import (
	"fmt"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/state"
)

// MigrationOpBegin is the op of a Migrate that begins a migration, beside
// the agents' ops (api.MigrationOp*).
const MigrationOpBegin = "begin"

// Migrate is one step of an allocation's checkpoint or move
// (docs/migration.md). Begin carries the new migration;
// the others name it by id, and the FSM applies them only to the
// migration they name while it is in the state they expect, so commit and
// abort race safely: whichever the log holds first is the outcome, and the
// other is answered with it.
type Migrate struct {
	AllocID     string               `json:"allocId"`
	Op          string               `json:"op"`
	Migration   *api.Migration       `json:"migration,omitempty"` // begin
	MigrationID string               `json:"migrationId,omitempty"`
	Reason      string               `json:"reason,omitempty"`
	Fallback    bool                 `json:"fallback,omitempty"`
	Report      *api.MigrationReport `json:"report,omitempty"`
	Time        time.Time            `json:"time"` // stamped by the proposer
}

// Migrated is the FSM's answer to a Migrate.
type Migrated struct {
	Applied bool
	Outcome string // the migration's outcome after the entry ("" in flight)
	Reason  string
}

// applyMigrate applies one migration step. A step that does not apply is
// answered, not failed: the entry changes nothing.
func applyMigrate(w *state.WriteTxn, c *Migrate) (any, error) {
	return migrate(w, c)
}

func migrate(w *state.WriteTxn, c *Migrate) (Migrated, error) {
	old := w.Snapshot().Alloc(c.AllocID)
	if old == nil {
		return Migrated{Reason: fmt.Sprintf("allocation %q not found", c.AllocID)}, nil
	}
	if c.Op == MigrationOpBegin {
		switch {
		case c.Migration == nil:
			return Migrated{Reason: "begin without a migration"}, nil
		case old.Migration.Active():
			return Migrated{Reason: fmt.Sprintf("migration %s is in flight", old.Migration.ID)}, nil
		case old.DesiredStatus != api.DesiredRun || old.Terminal():
			return Migrated{Reason: "the allocation is not running"}, nil
		case old.NodeID != c.Migration.SourceNode:
			return Migrated{Reason: "the allocation moved"}, nil
		}
		a := old.Copy()
		m := *c.Migration
		a.Migration = &m
		return Migrated{Applied: true}, w.UpsertAlloc(a)
	}
	m := old.Migration
	if m == nil || m.ID != c.MigrationID {
		return Migrated{Reason: fmt.Sprintf("no migration %q on allocation %s", c.MigrationID, c.AllocID)}, nil
	}
	if c.Op == api.MigrationOpReport {
		if m.Active() {
			return Migrated{Reason: "the migration is in flight"}, nil
		}
		a := old.Copy()
		a.Migration.Report = c.Report
		return Migrated{Applied: true, Outcome: m.Outcome, Reason: m.Reason}, w.UpsertAlloc(a)
	}
	if !m.Active() {
		return Migrated{Outcome: m.Outcome, Reason: m.Reason}, nil
	}
	a := old.Copy()
	end := func(outcome, reason string) (Migrated, error) {
		a.Migration.Outcome, a.Migration.Reason, a.Migration.EndedAt = outcome, reason, c.Time
		a.Migration.Fallback = c.Fallback
		if c.Report != nil {
			a.Migration.Report = c.Report
		}
		return Migrated{Applied: true, Outcome: outcome, Reason: reason}, w.UpsertAlloc(a)
	}
	switch c.Op {
	case api.MigrationOpCommit:
		if m.Kind != api.MigrationMove {
			return Migrated{Reason: "a checkpoint is not committed"}, nil
		}
		if old.DesiredStatus != api.DesiredRun || old.Terminal() {
			return end(api.MigrationAborted, "the allocation was stopped during the migration")
		}
		target := w.Snapshot().Node(m.TargetNode)
		if target == nil {
			return end(api.MigrationAborted, fmt.Sprintf("target node %s is gone", m.TargetNode))
		}
		// The move: the allocation and its resources go to the target
		// (UpsertAlloc moves the accounting with NodeID).
		a.NodeID, a.NodeName = target.ID, target.Name
		a.Assignment = m.TargetAssignment
		return end(api.MigrationCommitted, c.Reason)
	case api.MigrationOpAbort:
		return end(api.MigrationAborted, c.Reason)
	case api.MigrationOpDone:
		if m.Kind != api.MigrationCheckpoint {
			return Migrated{Reason: "only a checkpoint is done"}, nil
		}
		if c.Reason != "" {
			return end(api.MigrationFailed, c.Reason)
		}
		return end(api.MigrationDone, "")
	}
	return Migrated{Reason: fmt.Sprintf("unknown migration op %q", c.Op)}, nil
}

// migrateEvents says what a migration step does, read before it applies.
func migrateEvents(snap *state.Snapshot, c *Migrate) []api.Event {
	a := snap.Alloc(c.AllocID)
	if a == nil {
		return nil
	}
	ev := api.Event{Time: c.Time, Type: api.EventAllocMigration, Namespace: api.NamespaceOf(a.Namespace), Workload: a.Workload, NodeID: a.NodeID, AllocID: a.ID}
	m := a.Migration
	switch {
	case c.Op == MigrationOpBegin && c.Migration != nil && !m.Active() && !c.Migration.Active():
		// An attempt that could not begin (a drain's: the leader's drainer).
		ev.Message = fmt.Sprintf("migration of %s off node %s not possible (%s): it moves by stop-and-replace", a.ID, a.NodeName, c.Migration.Reason)
	case c.Op == MigrationOpBegin && c.Migration != nil && !m.Active():
		if c.Migration.Kind == api.MigrationCheckpoint {
			ev.Message = fmt.Sprintf("checkpoint %s of %s on node %s requested", c.Migration.ID, a.ID, a.NodeName)
		} else {
			ev.Message = fmt.Sprintf("migration %s of %s from node %s to node %s requested", c.Migration.ID, a.ID, a.NodeName, c.Migration.TargetNodeName)
		}
	case m == nil || m.ID != c.MigrationID || !m.Active() || c.Op == api.MigrationOpReport:
		return nil
	case c.Op == api.MigrationOpCommit && m.Kind == api.MigrationMove:
		how := "restored from its checkpoint"
		if c.Fallback {
			how = "restarted afresh (" + c.Reason + ")"
		}
		ev.Message = fmt.Sprintf("migration %s committed: %s now runs on node %s, %s", m.ID, a.ID, m.TargetNodeName, how)
	case c.Op == api.MigrationOpAbort:
		ev.Message = fmt.Sprintf("migration %s aborted: %s stays on node %s: %s", m.ID, a.ID, a.NodeName, c.Reason)
	case c.Op == api.MigrationOpDone && c.Reason != "":
		ev.Message = fmt.Sprintf("checkpoint %s of %s failed: %s", m.ID, a.ID, c.Reason)
	case c.Op == api.MigrationOpDone:
		ev.Message = fmt.Sprintf("checkpoint %s of %s written on node %s", m.ID, a.ID, a.NodeName)
	default:
		return nil
	}
	return []api.Event{ev}
}
