package api

import "time"

// Evaluation statuses.
const (
	EvalPending  = "pending"
	EvalComplete = "complete"
	EvalBlocked  = "blocked" // some placements did not fit; retried when capacity changes
	EvalFailed   = "failed"
)

// Evaluation triggers.
const (
	TriggerWorkloadRegister = "workload-register"
	TriggerWorkloadStop     = "workload-stop"
	TriggerNodeUpdate       = "node-update"
	TriggerNodeDown         = "node-down"
	TriggerAllocFailed      = "alloc-failed"
	TriggerCapacityChange   = "capacity-change"
	TriggerPreemption       = "preemption"
	TriggerFollowUp         = "follow-up"      // a delayed evaluation the scheduler asked for
	TriggerNodeReconnect    = "node-reconnect" // a down node heartbeats again
	TriggerDeployment       = "deployment"     // a deployment moved: a replacement runs, a promotion, a failure, a revert
)

// Evaluation is a request to reconcile one workload with the cell.
type Evaluation struct {
	ID          string `json:"id"`
	Namespace   string `json:"namespace"` // the workload's
	Workload    string `json:"workload"`
	Priority    int    `json:"priority"`
	TriggeredBy string `json:"triggeredBy"`
	NodeID      string `json:"nodeId,omitempty"`

	Status            string `json:"status"`
	StatusDescription string `json:"statusDescription,omitempty"`
	// Failures explains, per group, what could not be placed.
	Failures []GroupFailure `json:"failures,omitempty"`
	// Explanations say, per group placed or tried, what the scheduler saw.
	Explanations []Explanation `json:"explanations,omitempty"`
	// Attempts records the scheduler's inputs for each attempt at this
	// evaluation (newest last, at most MaxEvalAttempts), so that any plan it
	// committed can be replayed exactly.
	Attempts []ScheduleAttempt `json:"attempts,omitempty"`

	// WaitUntil, when set, holds the evaluation back until that time: a
	// follow-up the scheduler asked for (a delayed replacement, the end of
	// an unknown allocation's grace). Decided before it is proposed.
	WaitUntil time.Time `json:"waitUntil,omitempty"`

	CreateTime  time.Time `json:"createTime"`
	CreateIndex uint64    `json:"createIndex"`
	ModifyIndex uint64    `json:"modifyIndex"`
}

// MaxEvalAttempts bounds Evaluation.Attempts.
const MaxEvalAttempts = 16

// ScheduleAttempt is what the scheduler was given for one attempt: the
// seed of its node order, the nonce of its allocation ids (random per
// attempt, so ids are never reused) and the state index it read.
type ScheduleAttempt struct {
	Seed          int64  `json:"seed"`
	IDNonce       uint64 `json:"idNonce"`
	SnapshotIndex uint64 `json:"snapshotIndex"`
}

// GroupFailure says why some instances of a group could not be placed.
type GroupFailure struct {
	Group   string `json:"group"`
	Missing int    `json:"missing"` // instances not placed
	// NodesEvaluated is how many nodes were considered.
	NodesEvaluated int `json:"nodesEvaluated"`
	// Reasons counts nodes by the first filter that rejected them, e.g.
	// {"insufficient memory": 7, "rack != r3": 2}.
	Reasons map[string]int `json:"reasons"`
	// Summary is Reasons in words: "7 nodes: insufficient memory; 2 nodes: rack != r3".
	Summary string `json:"summary"`
}

// Plan is what a scheduler worker proposes for one evaluation. Only the plan
// applier turns a plan into committed state.
type Plan struct {
	EvalID    string `json:"evalId"`
	Namespace string `json:"namespace"` // the workload's
	Workload  string `json:"workload"`
	Priority  int    `json:"priority"`
	// SnapshotIndex is the state index the plan was computed on.
	SnapshotIndex uint64 `json:"snapshotIndex"`

	// Place holds new allocations, keyed by node id.
	Place map[string][]*Allocation `json:"place,omitempty"`
	// Stop holds allocations to stop, keyed by node id.
	Stop map[string][]StopRequest `json:"stop,omitempty"`
	// Preemptions counts the stops that evict lower-priority allocations
	// (those with PreemptedBy set) to make room for this plan's placements.
	Preemptions int `json:"preemptions,omitempty"`

	Failures []GroupFailure `json:"failures,omitempty"`
	// Explanations say, per group the plan places replicas of, what the
	// scheduler saw: filter counts and the chosen node's score components.
	Explanations []Explanation `json:"explanations,omitempty"`
	// FollowUps are evaluations of this workload to run later (WaitUntil):
	// delayed replacements, unknown allocations whose grace ends. The plan
	// applier commits them with the plan.
	FollowUps []*Evaluation `json:"followUps,omitempty"`
	// Deployment is the progress of the workload's deployment as this
	// plan sees it (api/deployment.go); the plan applier commits it.
	Deployment *DeploymentProgress `json:"deployment,omitempty"`
	// InPlace moves live allocations to the workload's version without
	// replacing them: their group spec did not change (only the count,
	// labels, priority or update policy did).
	InPlace []InPlaceUpdate `json:"inPlace,omitempty"`
}

// InPlaceUpdate moves one allocation to workload version Version (its
// spec, its priority) in place. Applied only if the stored workload is
// still at Version and the allocation is live.
type InPlaceUpdate struct {
	AllocID string `json:"allocId"`
	Version uint64 `json:"version"`
}

// Explanation says how one evaluation placed one group.
type Explanation struct {
	Group  string `json:"group"`
	Wanted int    `json:"wanted"` // replicas the evaluation tried to place
	Placed int    `json:"placed"`
	// NodesExamined counts the nodes the filters ran on: with feasible-node
	// sampling, the part of the cell walked until enough fitted.
	NodesExamined int `json:"nodesExamined"`
	// NodesFeasible counts the examined nodes that passed every filter.
	NodesFeasible int `json:"nodesFeasible"`
	// Filtered counts the examined nodes each filter rejected, by reason,
	// largest first.
	Filtered []FilterCount `json:"filtered,omitempty"`
	// Chosen is the node the first replica went to, with its score.
	Chosen *NodeScore `json:"chosen,omitempty"`
}

// FilterCount is how many nodes one filter rejected for one reason.
type FilterCount struct {
	Filter string `json:"filter"` // ready, require, resources, gpu, numa, spread rack, ...
	Reason string `json:"reason"` // insufficient cpu, rack != r3, ...
	Nodes  int    `json:"nodes"`
	// NodeNames are the first MaxNamedRejections of those nodes, in the
	// order the scheduler examined them (nomad #23810: which nodes a
	// placement excluded, by name).
	NodeNames []string `json:"nodeNames,omitempty"`
}

// MaxNamedRejections bounds FilterCount.NodeNames: an explanation names a
// few nodes per reason, never the whole cell.
const MaxNamedRejections = 8

// NodeScore is a node's total score and what it is made of, largest
// contribution first.
type NodeScore struct {
	Node       string           `json:"node"`
	NodeName   string           `json:"nodeName,omitempty"`
	Score      float64          `json:"score"`
	Components []ScoreComponent `json:"components"`
}

// ScoreComponent is one weighted term of a node's score: a policy
// (binpack, spread, ...), a prefer or avoid rule, a relation rule.
type ScoreComponent struct {
	Name  string  `json:"name"`
	Score float64 `json:"score"`
}

// StopRequest asks for one allocation to stop.
type StopRequest struct {
	AllocID string `json:"allocId"`
	Reason  string `json:"reason"`
	// Lost marks the allocation's client status lost (its node is down).
	Lost bool `json:"lost,omitempty"`
	// PreemptedBy names the allocation whose placement evicted this one.
	PreemptedBy string `json:"preemptedBy,omitempty"`
}

// IsNoOp reports whether the plan changes nothing.
func (p *Plan) IsNoOp() bool { return len(p.Place) == 0 && len(p.Stop) == 0 }

// PlanResult is what the plan applier committed of a plan.
type PlanResult struct {
	// Committed and Rejected node ids. A rejected node's part of the plan
	// no longer fits the newest state; the worker retries on a fresher snapshot.
	Committed     []string `json:"committed,omitempty"`
	Rejected      []string `json:"rejected,omitempty"`
	RejectReasons []string `json:"rejectReasons,omitempty"`
	Index         uint64   `json:"index"`
}
