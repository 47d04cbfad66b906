package api

import (
	"context"
	"net/url"
)

// MigrateAnswer is the server's answer to a migrate request: the migration
// it began (its outcome follows on the allocation).
type MigrateAnswer struct {
	Index     uint64     `json:"index"`
	AllocID   string     `json:"allocId"`
	Migration *Migration `json:"migration"`
}

// Migrate begins a checkpoint or a move of an allocation (id or unique
// prefix). It is not retried after a failure in flight: read the
// allocation to learn whether it began.
func (c *Client) Migrate(ctx context.Context, allocID string, req *MigrateRequest) (*MigrateAnswer, error) {
	var out MigrateAnswer
	err := c.postJSON(ctx, "/v1/allocations/"+url.PathEscape(allocID)+"/migrate", req, &out, false)
	return &out, err
}

// IncomingMigration returns the allocation whose move to nodeID is in
// flight, with its migration's token (agent API: the target checks an
// image it is offered against it).
func (c *Client) IncomingMigration(ctx context.Context, nodeID, allocID string) (*Allocation, error) {
	var out Allocation
	_, err := c.get(ctx, "/v1/agent/nodes/"+url.PathEscape(nodeID)+"/incoming/"+url.PathEscape(allocID), nil, &out)
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// ReportMigration reports a migration's commit, abort, end or figures
// (agent API). Reporting twice is reporting once: the answer is the
// migration's outcome either way.
func (c *Client) ReportMigration(ctx context.Context, allocID string, req *MigrationOutcomeRequest) (*MigrationOutcomeResponse, error) {
	var out MigrationOutcomeResponse
	err := c.postJSON(ctx, "/v1/agent/allocations/"+url.PathEscape(allocID)+"/migration", req, &out, true)
	return &out, err
}

// AllocationWatch reads one allocation, as a blocking query when q sets
// an index: it answers once the allocations changed past it.
func (c *Client) AllocationWatch(ctx context.Context, id string, q *Query) (*Allocation, QueryMeta, error) {
	var out Allocation
	m, err := c.get(ctx, "/v1/allocations/"+url.PathEscape(id), q, &out)
	return &out, m, err
}
