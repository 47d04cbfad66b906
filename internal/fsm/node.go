package fsm

import (
	"fmt"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/state"
)

// UpsertNode registers a node (and re-evaluates blocked work).
type UpsertNode struct {
	Node *api.Node `json:"node"`
	// Key, when set, is the node's key: given with the node's first
	// registration, checked on every later one (the FSM refuses a
	// different key: state.ErrNodeIDTaken).
	Key   *state.NodeKey    `json:"key,omitempty"`
	Evals []*api.Evaluation `json:"evals,omitempty"`
	Time  time.Time         `json:"time"` // stamped by the proposer, for events
	// Notices are what the agent has to say (api.Node.AgentNotices), each
	// an event; they are not stored on the node.
	Notices []string `json:"notices,omitempty"`
}

// NodeStatus changes a node's status, with the evaluations that follow.
type NodeStatus struct {
	NodeID string            `json:"nodeId"`
	Status string            `json:"status"`
	Reason string            `json:"reason"`
	Evals  []*api.Evaluation `json:"evals,omitempty"`
	Time   time.Time         `json:"time"` // stamped by the proposer, for events
	// LastHeartbeat and Lease, on a node going down, are when the leader
	// last heard from it and the lease that heartbeat renewed.
	LastHeartbeat time.Time     `json:"lastHeartbeat,omitempty"`
	Lease         time.Duration `json:"lease,omitempty"`
}

func applyUpsertNode(w *state.WriteTxn, c *UpsertNode) error {
	if c.Key != nil {
		if err := w.SetNodeKey(c.Key); err != nil {
			return err // the node record stays as it was
		}
	}
	if err := w.UpsertNode(c.Node); err != nil {
		return err
	}
	return upsertEvals(w, c.Evals)
}

func upsertNodeEvents(snap *state.Snapshot, c *UpsertNode) []api.Event {
	var out []api.Event
	if old := snap.Node(c.Node.ID); old == nil || old.Status == api.NodeDown {
		out = append(out, api.Event{Time: c.Time, Type: api.EventNodeRegistered, NodeID: c.Node.ID,
			Message: fmt.Sprintf("node %s registered", c.Node.Name)})
	}
	for _, n := range c.Notices {
		out = append(out, api.Event{Time: c.Time, Type: api.EventNodeAgent, NodeID: c.Node.ID,
			Message: fmt.Sprintf("node %s: %s", c.Node.Name, n)})
	}
	return out
}

// upsertNodeEffects: a node that registers brings capacity.
func upsertNodeEffects(c *UpsertNode) Effects {
	e := evals(c.Evals...)
	e.Unblock = true
	return e
}

func applyNodeStatus(w *state.WriteTxn, c *NodeStatus) error {
	update := func() error { return w.UpdateNodeStatus(c.NodeID, c.Status, c.Reason) }
	if c.Status == api.NodeDown {
		update = func() error { return w.MarkNodeDown(c.NodeID, c.Reason, c.Time, c.LastHeartbeat, c.Lease) }
	}
	if err := update(); err != nil {
		return err
	}
	return upsertEvals(w, c.Evals)
}

func nodeStatusEvents(snap *state.Snapshot, c *NodeStatus) []api.Event {
	t := api.EventNodeReady
	if c.Status == api.NodeDown {
		t = api.EventNodeDown
	}
	name := c.NodeID
	if n := snap.Node(c.NodeID); n != nil {
		name = n.Name
	}
	return []api.Event{{Time: c.Time, Type: t, NodeID: c.NodeID, Message: fmt.Sprintf("node %s %s: %s", name, c.Status, c.Reason)}}
}

// nodeStatusEffects: a node back ready brings its capacity back.
func nodeStatusEffects(c *NodeStatus) Effects {
	e := evals(c.Evals...)
	e.Unblock = c.Status == api.NodeReady
	return e
}
