package migrate

import (
	"context"
	"log/slog"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/drivers"
)

// API is what migrations need of the control plane; the API client has
// it. An agent whose server API lacks it takes part in no migration.
type API interface {
	IncomingMigration(ctx context.Context, nodeID, allocID string) (*api.Allocation, error)
	ReportMigration(ctx context.Context, allocID string, req *api.MigrationOutcomeRequest) (*api.MigrationOutcomeResponse, error)
}

// Alloc is an allocation's runner as a migration sees it. Its methods
// are safe for concurrent use.
type Alloc interface {
	ID() string
	// Dir is the allocation's directory (its task directories inside).
	Dir() string
	Log() *slog.Logger
	Tasks() []Task
	// Wait blocks until every task runner has returned.
	Wait()
}

// Task is one task runner of an Alloc. Its methods are safe for
// concurrent use.
type Task interface {
	// Config is the task's configuration; a migration reads it and
	// passes it to the driver, never changes it.
	Config() *drivers.TaskConfig
	// Driver is the task's driver with its capabilities.
	Driver() *drivers.Loaded
	State() api.TaskState
	// Handle is the running task's, nil when none runs.
	Handle() *drivers.TaskHandle
	// Holds is the task's migration hold (its runner's exited hook).
	Holds() *Holds
}

// Incoming is the runner of an allocation that moves to this node, made
// by Runners.New and not started.
type Incoming interface {
	Alloc
	// Adopt makes the task's runner wait on a task restored under h
	// (restarts counted as on the source: was), instead of starting it.
	Adopt(task Task, h *drivers.TaskHandle, was *api.TaskState)
	// Register makes the runner known to the agent, marked incoming (never
	// stopped as unlisted) until Commit or Drop.
	Register()
	// Commit starts the runner on the restored tasks and reports it.
	Commit()
	// Drop forgets the runner and its files: the move did not commit.
	Drop()
}

// Runners is the agent's runners as the target of a move sees them.
type Runners interface {
	// New makes the runner of alloc (its directories made), not started
	// and not known to the agent.
	New(alloc *api.Allocation) (Incoming, error)
	// Has reports whether the agent has a runner of the allocation.
	Has(allocID string) bool
}
