package migrate

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/strata-dev/strata/api"
)

// reportRetry bounds how long an agent keeps asking the servers to record
// a migration step whose outcome decides what runs where.
const reportRetry = 2 * time.Minute

// Config is what a node's Migrator needs.
type Config struct {
	NodeID, NodeName string
	// API reaches the servers; nil: the node takes part in no migration.
	API API
	// Transport carries images to other agents.
	Transport ImageTransport
	Images    Images
	// Checkpoint is what the node can dump (api.Node.Checkpoint).
	Checkpoint *api.NodeCheckpoint
	// NoPreCopy says why a move copies no memory ahead (Probe).
	NoPreCopy string
	// Backoff is the retry delay after d (the agent's).
	Backoff func(d time.Duration) time.Duration
	Log     *slog.Logger
}

// Migrator runs the node's side of every migration: the source's
// (Checkpoint, Move, SettleAtStart) and the target's (Receive). It is
// safe for concurrent use; ctx, given to each call, ends with the agent.
type Migrator struct {
	cfg Config
}

// New returns the node's migrator.
func New(cfg Config) *Migrator {
	if cfg.Backoff == nil {
		cfg.Backoff = func(d time.Duration) time.Duration { return min(2*d+100*time.Millisecond, 5*time.Second) }
	}
	return &Migrator{cfg: cfg}
}

// Images is where the node keeps migration images.
func (m *Migrator) Images() Images { return m.cfg.Images }

// report records a migration step, retrying until the servers answer,
// reportRetry passes or ctx is done.
func (m *Migrator) report(ctx context.Context, allocID string, req *api.MigrationOutcomeRequest) (*api.MigrationOutcomeResponse, error) {
	if m.cfg.API == nil {
		return nil, fmt.Errorf("the agent's server API cannot report migrations")
	}
	deadline := time.Now().Add(reportRetry)
	var delay time.Duration
	for {
		resp, err := m.cfg.API.ReportMigration(ctx, allocID, req)
		if err == nil {
			return resp, nil
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			return nil, err
		}
		delay = m.cfg.Backoff(delay)
		m.cfg.Log.Warn("report migration step failed; retrying", "alloc", allocID, "op", req.Op, "err", err, "retry_in", delay)
		select {
		case <-ctx.Done():
		case <-time.After(delay):
		}
	}
}

func millis(d time.Duration) int64 { return d.Milliseconds() }
