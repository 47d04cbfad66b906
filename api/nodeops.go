package api

import "time"

// Node eligibility: whether the scheduler may place new work on a node.
// The empty value is eligible (nodes registered before eligibility existed).
const (
	NodeEligible   = "eligible"
	NodeIneligible = "ineligible"
)

// Reasons a live node takes no new work, as the scheduler's explanations
// and `strata nodes` show them.
const (
	UnschedulableQuarantined = "node quarantined"
	UnschedulableDraining    = "node draining"
	UnschedulableIneligible  = "node ineligible"
)

// Node operation event types.
const (
	EventNodeEligibility = "node-eligibility"
	EventNodeDrain       = "node-drain"
	EventNodeQuarantine  = "node-quarantine"
	EventNodePurged      = "node-purged"
)

// Evaluation triggers of node operations.
const (
	TriggerNodeDrain  = "node-drain"
	TriggerNodePurged = "node-purged"
)

// DefaultDrainDeadline is how long a drain may move allocations under
// their disruption budgets before the rest are stopped, when the operator
// names no deadline.
const DefaultDrainDeadline = time.Hour

// DrainSpec is a drain in progress: its allocations are moved off the
// node, under each group's disruption budget, until Deadline; then those
// left are stopped (and replaced elsewhere).
type DrainSpec struct {
	StartedAt time.Time `json:"startedAt"`
	Deadline  time.Time `json:"deadline"`
	// KeepSystem leaves the allocations of system workloads (priority
	// class system) on the node.
	KeepSystem bool `json:"keepSystem,omitempty"`
}

// Keeps reports whether a drain leaves an allocation of a workload of
// priority class class where it is.
func (d *DrainSpec) Keeps(class string) bool {
	return d != nil && d.KeepSystem && class == PrioritySystem
}

// Quarantine says why and since when a node is fenced off.
type Quarantine struct {
	Reason string    `json:"reason"`
	Since  time.Time `json:"since"`
	// Auto is set when the leader quarantined the node on its own (its
	// allocations failed far more often than the cell's, or its
	// heartbeats flapped: docs/nodes.md); Reason holds the evidence.
	Auto bool `json:"auto,omitempty"`
}

// MaxNodeDowns is how many of its down times a node keeps (Node.Downs).
const MaxNodeDowns = 16

// Alive reports whether the node's agent is heard from: any status but
// down (operator states keep a node alive).
func (n *Node) Alive() bool {
	switch n.Status {
	case NodeReady, NodeDraining, NodeQuarantined:
		return true
	}
	return false
}

// Unschedulable is why an operator state keeps new work off the node, or ""
// when none does. Liveness is Alive's question, not this one's.
func (n *Node) Unschedulable() string {
	switch {
	case n.Quarantine != nil || n.Status == NodeQuarantined:
		return UnschedulableQuarantined
	case n.Drain != nil || n.Status == NodeDraining:
		return UnschedulableDraining
	case n.Eligibility == NodeIneligible:
		return UnschedulableIneligible
	}
	return ""
}

// LiveStatus is the status a node whose agent is heard from shows: its
// operator state in one word (quarantined, draining) or ready.
func (n *Node) LiveStatus() string {
	switch {
	case n.Quarantine != nil:
		return NodeQuarantined
	case n.Drain != nil:
		return NodeDraining
	}
	return NodeReady
}

// DrainRequest starts or cancels a drain (POST /v1/nodes/{id}/drain).
type DrainRequest struct {
	// Deadline is a Go duration ("30m", "2h"); empty is DefaultDrainDeadline.
	Deadline   string `json:"deadline,omitempty"`
	KeepSystem bool   `json:"keepSystem,omitempty"`
	// Cancel ends a drain in progress; the node stays ineligible.
	Cancel bool `json:"cancel,omitempty"`
}

// EligibilityRequest cordons or uncordons a node (POST /v1/nodes/{id}/eligibility).
type EligibilityRequest struct {
	Eligible bool `json:"eligible"`
}

// QuarantineRequest quarantines a node, or lifts its quarantine (POST
// /v1/nodes/{id}/quarantine). A quarantined node is drained.
type QuarantineRequest struct {
	Reason   string `json:"reason,omitempty"`
	Deadline string `json:"deadline,omitempty"` // of the drain; empty is DefaultDrainDeadline
	Lift     bool   `json:"lift,omitempty"`
}

// NodeOpResponse answers a node operation: the node as the command left
// it (nil after a purge) and the raft index of the command.
type NodeOpResponse struct {
	Index uint64 `json:"index"`
	Node  *Node  `json:"node,omitempty"`
	// Lost counts the allocations a purge marked lost.
	Lost int `json:"lost,omitempty"`
}

// NodeStatus is `strata node status NODE`: the node and what still runs
// on it, with what a drain has left to move.
type NodeStatus struct {
	Node *Node `json:"node"`
	// Allocations are the node's non-terminal allocations.
	Allocations []*Allocation `json:"allocations"`
	// Remaining counts those a drain still has to move (system ones a
	// drain keeps are not counted); 0 when no drain runs.
	Remaining int `json:"remaining"`
}
