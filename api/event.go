package api

import "time"

// Event types.
const (
	EventWorkloadRegistered = "workload-registered"
	EventWorkloadStopped    = "workload-stopped"
	EventWorkloadPurged     = "workload-purged"
	EventNodeRegistered     = "node-registered"
	EventNodeDown           = "node-down"
	EventNodeReady          = "node-ready"
	EventPlaced             = "placed"
	EventStopped            = "stopped"
	EventPreempted          = "preempted"
	EventAllocFailed        = "allocation-failed"
	EventUnplaceable        = "unplaceable"
	EventCellConfig         = "cell-config"
	// EventAllocHealth is an allocation becoming healthy or unhealthy;
	// EventCheck a health check changing status, with its last output.
	EventAllocHealth = "allocation-health"
	EventCheck       = "check"
	// EventCellCreated is the cell's identity being made, once per cell.
	EventCellCreated = "cell-created"
	// EventNodeAgent is something a node's agent reported about itself:
	// desired state it refused (another cell, a server behind), processes
	// it adopted or stopped at start.
	EventNodeAgent      = "node-agent"
	EventNotRescheduled = "not-rescheduled" // a failed allocation the reschedule policy does not replace, with why
	EventFollowUp       = "follow-up"       // an evaluation planned for later (reschedule delay, unknown grace)
	EventDeployment     = "deployment"      // a deployment started, changed status, was promoted or reverted (docs/deployments.md)
	// EventEvalRetried is an operator running a failed evaluation again.
	EventEvalRetried = "evaluation-retried"
	// EventIncident is an incident opened, widened, merged or closed;
	// EventAnomaly a control-plane signal leaving its normal or coming
	// back (docs/incidents.md).
	EventIncident = "incident"
	EventAnomaly  = "anomaly"
)

// EventTypes lists every event type, for filters (strata events --type)
// and completion. TestEventTypesAreListed fails when an Event… constant of
// this package is missing from it.
var EventTypes = []string{
	EventWorkloadRegistered, EventWorkloadStopped, EventWorkloadPurged, EventNodeRegistered, EventNodeDown, EventNodeReady,
	EventPlaced, EventStopped, EventPreempted, EventAllocFailed, EventUnplaceable, EventCellConfig, EventAllocHealth, EventCheck,
	EventCellCreated, EventNodeAgent, EventNotRescheduled, EventFollowUp, EventDeployment,
	EventNodeEligibility, EventNodeDrain, EventNodeQuarantine, EventNodePurged, EventAllocMigration, EventEvalRetried,
	EventIncident, EventAnomaly,
}

// Event is one line of the cell's history, as `strata events` shows it.
// The FSM derives events from the commands it applies, so every server
// holds the same list; the newest are kept, the oldest dropped.
type Event struct {
	ID        string    `json:"id"` // raft index and sequence, sortable
	Index     uint64    `json:"index"`
	Time      time.Time `json:"time"`
	Type      string    `json:"type"`
	Namespace string    `json:"namespace,omitempty"`
	Workload  string    `json:"workload,omitempty"`
	NodeID    string    `json:"nodeId,omitempty"`
	AllocID   string    `json:"allocId,omitempty"`
	Message   string    `json:"message"`
	// Incident names the incident the event is part of, as the leader
	// correlated it (docs/incidents.md): set when the API serves the
	// event, and stored only on the incident's own events.
	Incident string `json:"incident,omitempty"`
}
