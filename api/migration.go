package api

import "time"

// Migration kinds.
const (
	// MigrationMove checkpoints the allocation's tasks on their node,
	// restores them on another and moves the allocation there.
	MigrationMove = "migrate"
	// MigrationCheckpoint only checkpoints the tasks on their node and
	// leaves them running; the image stays on the node.
	MigrationCheckpoint = "checkpoint"
)

// Migration outcomes; empty while the migration is in flight.
const (
	// MigrationCommitted: the allocation now runs on the target node.
	MigrationCommitted = "committed"
	// MigrationAborted: the allocation stayed on its node.
	MigrationAborted = "aborted"
	// MigrationDone: a checkpoint was written.
	MigrationDone = "done"
	// MigrationFailed: a checkpoint could not be written.
	MigrationFailed = "failed"
)

// Migration ops an agent reports (MigrationOutcomeRequest.Op).
const (
	MigrationOpCommit = "commit" // the target restored the tasks: move the allocation
	MigrationOpAbort  = "abort"  // the allocation stays where it is
	MigrationOpDone   = "done"   // a checkpoint ended (Reason set when it failed)
	MigrationOpReport = "report" // the source's figures, after the outcome
)

// Migration is the one checkpoint or move of an allocation in flight (its
// Outcome empty) or the last one that ended. The server creates it;
// agents act on it and end it (docs/migration.md).
type Migration struct {
	ID   string `json:"id"`
	Kind string `json:"kind"` // migrate or checkpoint
	// SourceNode is the node the allocation ran on when it began.
	SourceNode string `json:"sourceNode"`
	// TargetNode and TargetAssignment are where a move restores the
	// tasks; empty for a checkpoint. TargetAddr is the target agent's
	// HTTP API when the move began; the source sends the image there.
	TargetNode       string     `json:"targetNode,omitempty"`
	TargetNodeName   string     `json:"targetNodeName,omitempty"`
	TargetAddr       string     `json:"targetAddr,omitempty"`
	TargetAssignment Assignment `json:"targetAssignment"`
	// Token authenticates the image transfer from source to target: the
	// target accepts an image only with the token of a migration the
	// server says is in flight to it. Never shown by the public API.
	Token string `json:"token,omitempty"`

	RequestedAt time.Time `json:"requestedAt"`
	EndedAt     time.Time `json:"endedAt,omitempty"`
	Outcome     string    `json:"outcome,omitempty"`
	Reason      string    `json:"reason,omitempty"`
	// Fallback is set when the tasks could not be checkpointed and were
	// stopped on the source and started afresh on the target instead.
	Fallback bool             `json:"fallback,omitempty"`
	Report   *MigrationReport `json:"report,omitempty"`
}

// Active reports whether the migration is still in flight.
func (m *Migration) Active() bool { return m != nil && m.Outcome == "" }

// MigrationReport is what a checkpoint or move measured.
type MigrationReport struct {
	CheckpointBytes int64 `json:"checkpointBytes"`
	CheckpointMs    int64 `json:"checkpointMs"`
	TransferMs      int64 `json:"transferMs,omitempty"`
	RestoreMs       int64 `json:"restoreMs,omitempty"`
	CommitMs        int64 `json:"commitMs,omitempty"`
	// DowntimeMs is how long the tasks did not run: from the freeze of
	// the checkpoint to their resumption on the target (or back on the
	// source), measured on the source's clock.
	DowntimeMs int64 `json:"downtimeMs"`
	// ImageStore says where the source kept the image while the tasks
	// were stopped: "tmpfs", or "disk: <why not tmpfs>".
	ImageStore string `json:"imageStore,omitempty"`
	// PreCopy says why the memory was not copied ahead while the tasks
	// ran (criu pre-dump), when it was not.
	PreCopy string `json:"preCopy,omitempty"`
}

// MigrateRequest asks for a checkpoint or a move of an allocation
// (POST /v1/allocations/{id}/migrate).
type MigrateRequest struct {
	Kind string `json:"kind,omitempty"` // migrate (default) or checkpoint
	// To names the target node (id or name); empty lets the scheduler
	// choose. Only for a move.
	To string `json:"to,omitempty"`
}

// MigrationOutcomeRequest is an agent's report on a migration
// (POST /v1/agent/allocations/{id}/migration).
type MigrationOutcomeRequest struct {
	MigrationID string           `json:"migrationId"`
	Op          string           `json:"op"`
	Reason      string           `json:"reason,omitempty"`
	Fallback    bool             `json:"fallback,omitempty"`
	Report      *MigrationReport `json:"report,omitempty"`
}

// MigrationOutcomeResponse says how the migration stands after the report:
// Outcome is the migration's outcome in the committed state, which may be
// another agent's (a commit that lost to an abort answers aborted).
type MigrationOutcomeResponse struct {
	Applied bool   `json:"applied"`
	Outcome string `json:"outcome"`
	Reason  string `json:"reason,omitempty"`
	Index   uint64 `json:"index"`
}

// NodeCheckpoint says whether a node can checkpoint and restore tasks.
type NodeCheckpoint struct {
	Available bool   `json:"available"`
	Tool      string `json:"tool,omitempty"` // e.g. "criu 4.2"
	Reason    string `json:"reason,omitempty"`
	// Drivers names the task drivers whose tasks a move off this node
	// keeps the memory of: "containerd" when its runc can use criu,
	// "exec" when its criu works (namespaced exec tasks are dumped with
	// their namespaces; docs/migration.md). A move of another task falls back to
	// stop-and-restart, and drains replace such tasks instead (a surge,
	// not a gap).
	Drivers []string `json:"drivers,omitempty"`
	// RootOnly: criu here dumps root's tasks only, and Limit says why
	// (on a host that withholds CAP_SYS_RESOURCE from the agent, criu
	// cannot read another user's task's rlimits). A move of another
	// user's task stops and restarts it; drains replace such tasks.
	RootOnly bool   `json:"rootOnly,omitempty"`
	Limit    string `json:"limit,omitempty"`
}

// EventAllocMigration is the event type of a checkpoint or move that
// began, committed, aborted or ended.
const EventAllocMigration = "alloc-migration"

// KeepsMemoryOfTask reports whether a move of task t off the node keeps its
// memory: its driver's (KeepsMemoryOf), and on a node whose criu dumps
// root's tasks only, t runs as root: it names root as its user, or its
// node saw it run as uid 0 (st, the allocation's state of t, may be nil;
// a container of an image without a user runs so).
func (c *NodeCheckpoint) KeepsMemoryOfTask(t *Task, st *TaskState) bool {
	if !c.KeepsMemoryOf(t.Driver) {
		return false
	}
	return !c.RootOnly || t.AsksForRoot() || st.RunsAsRoot()
}

// KeepsMemoryOf reports whether a move of a task of driver off the node
// keeps its memory ("" is exec, the default driver), whatever its user
// (see KeepsMemoryOfTask).
func (c *NodeCheckpoint) KeepsMemoryOf(driver string) bool {
	if c == nil || !c.Available {
		return false
	}
	if driver == "" {
		driver = "exec"
	}
	for _, d := range c.Drivers {
		if d == driver {
			return true
		}
	}
	return false
}
