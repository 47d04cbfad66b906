package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// HeartbeatResponse is the server's answer to a node's registration or
// heartbeat: how often the node should heartbeat and how long the leader
// waits before it marks the node down. Both grow with the cell so that its
// heartbeat rate stays bounded (docs/architecture.md).
type HeartbeatResponse struct {
	// Index is the state index of a registration (0 for a heartbeat).
	Index             uint64 `json:"index,omitempty"`
	HeartbeatTTL      string `json:"heartbeatTTL"`
	HeartbeatInterval string `json:"heartbeatInterval,omitempty"`
	// Lease is how long, counted from when it sent the heartbeat, the node
	// may run fenced copies (atMostOnce, disconnect.stopAfter) without
	// another answer. Empty from a registration and from servers without
	// leases.
	Lease string `json:"lease,omitempty"`
}

// Interval returns HeartbeatInterval parsed, or 0 when the server did not
// say (an older server) or said something unreadable.
func (r *HeartbeatResponse) Interval() time.Duration {
	if r == nil {
		return 0
	}
	d, err := time.ParseDuration(r.HeartbeatInterval)
	if err != nil || d < 0 {
		return 0
	}
	return d
}

// LeaseDuration returns Lease parsed, or 0 when the answer grants none.
func (r *HeartbeatResponse) LeaseDuration() time.Duration {
	if r == nil {
		return 0
	}
	d, err := time.ParseDuration(r.Lease)
	if err != nil || d < 0 {
		return 0
	}
	return d
}

// RegisterNodeTimed registers or refreshes a node like RegisterNode and
// returns the server's heartbeat timing for it.
func (c *Client) RegisterNodeTimed(ctx context.Context, n *Node) (*HeartbeatResponse, error) {
	var out HeartbeatResponse
	if err := c.postJSON(ctx, "/v1/agent/nodes", n, &out, false); err != nil {
		return nil, err
	}
	return &out, nil
}

// NodeHeartbeat tells the server the node is alive like Heartbeat and returns
// the server's heartbeat timing and lease for it.
func (c *Client) NodeHeartbeat(ctx context.Context, nodeID string) (*HeartbeatResponse, error) {
	resp, _, err := c.NodeHeartbeatMeta(ctx, nodeID)
	return resp, err
}

// NodeHeartbeatMeta is NodeHeartbeat that also returns what the answer says
// about the cell (its id and the server's applied index). The error wraps
// ErrNodeUnknown when the server does not know the node.
func (c *Client) NodeHeartbeatMeta(ctx context.Context, nodeID string) (*HeartbeatResponse, QueryMeta, error) {
	var out HeartbeatResponse
	m, err := c.do(ctx, request{method: http.MethodPut, path: "/v1/agent/nodes/" + url.PathEscape(nodeID) + "/heartbeat", idempotent: true}, &out)
	var e *Error
	if errors.As(err, &e) && e.Code == "node-unknown" {
		return nil, m, fmt.Errorf("%w: %s", ErrNodeUnknown, e.Message)
	}
	if err != nil {
		return nil, m, err
	}
	return &out, m, nil
}
