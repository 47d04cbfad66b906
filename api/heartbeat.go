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
// the server's heartbeat timing for it.
func (c *Client) NodeHeartbeat(ctx context.Context, nodeID string) (*HeartbeatResponse, error) {
	var out HeartbeatResponse
	_, err := c.do(ctx, request{method: http.MethodPut, path: "/v1/agent/nodes/" + url.PathEscape(nodeID) + "/heartbeat", idempotent: true}, &out)
	var e *Error
	if errors.As(err, &e) && e.Code == "node-unknown" {
		return nil, fmt.Errorf("%w: %s", ErrNodeUnknown, e.Message)
	}
	if err != nil {
		return nil, err
	}
	return &out, nil
}
