package api

import (
	"context"
	"net/url"
)

func nodePath(node, op string) string { return "/v1/nodes/" + url.PathEscape(node) + "/" + op }

// SetNodeEligibility cordons (false) or uncordons (true) a node, by id or
// name. Safe to retry.
func (c *Client) SetNodeEligibility(ctx context.Context, node string, eligible bool) (*NodeOpResponse, error) {
	var out NodeOpResponse
	err := c.postJSON(ctx, nodePath(node, "eligibility"), &EligibilityRequest{Eligible: eligible}, &out, true)
	return &out, err
}

// DrainNode starts or cancels a drain.
func (c *Client) DrainNode(ctx context.Context, node string, req *DrainRequest) (*NodeOpResponse, error) {
	var out NodeOpResponse
	err := c.postJSON(ctx, nodePath(node, "drain"), req, &out, false)
	return &out, err
}

// QuarantineNode quarantines a node or lifts its quarantine.
func (c *Client) QuarantineNode(ctx context.Context, node string, req *QuarantineRequest) (*NodeOpResponse, error) {
	var out NodeOpResponse
	err := c.postJSON(ctx, nodePath(node, "quarantine"), req, &out, false)
	return &out, err
}

// PurgeNode removes a dead node; its allocations are marked lost and
// replaced.
func (c *Client) PurgeNode(ctx context.Context, node string) (*NodeOpResponse, error) {
	var out NodeOpResponse
	err := c.postJSON(ctx, nodePath(node, "purge"), struct{}{}, &out, false)
	return &out, err
}

// NodeStatus is a node with what still runs on it and what its drain has
// left to move; with q.Index it is a blocking query.
func (c *Client) NodeStatus(ctx context.Context, node string, q *Query) (*NodeStatus, QueryMeta, error) {
	var out NodeStatus
	m, err := c.get(ctx, nodePath(node, "status"), q, &out)
	return &out, m, err
}
