package server

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/state"
)

// commandType tags a raft log entry. Values are persisted: never renumber.
type commandType uint8

const (
	cmdUpsertWorkload commandType = iota + 1
	cmdStopWorkload
	cmdUpsertNode
	cmdNodeStatus
	cmdUpsertEvals
	cmdApplyPlan
	cmdAllocClientUpdate
	cmdSetCellConfig
	// cmdApplyPlanPart is one entry of a plan in the compact, chunked form
	// (planentry.go); the plan applier writes it instead of cmdApplyPlan,
	// which old logs still hold and the FSM still decodes.
	cmdApplyPlanPart
	// cmdSetCellID records the cell's identity (cellid.go).
	cmdSetCellID
	// cmdNodeOp is an operator's (or the drainer's) change of a node:
	// eligibility, drain, quarantine, purge (nodeops.go).
	cmdNodeOp
)

func (c commandType) String() string {
	switch c {
	case cmdUpsertWorkload:
		return "upsert-workload"
	case cmdStopWorkload:
		return "stop-workload"
	case cmdUpsertNode:
		return "upsert-node"
	case cmdNodeStatus:
		return "node-status"
	case cmdUpsertEvals:
		return "upsert-evals"
	case cmdApplyPlan:
		return "apply-plan"
	case cmdAllocClientUpdate:
		return "alloc-client-update"
	case cmdSetCellConfig:
		return "set-cell-config"
	case cmdApplyPlanPart:
		return "apply-plan-part"
	case cmdSetCellID:
		return "set-cell-id"
	case cmdMigrate:
		return "migrate"
	case cmdNodeOp:
		return "node-op"
	}
	if name := securityCommandName(c); name != "" {
		return name
	}
	if name := deploymentCommandName(c); name != "" {
		return name
	}
	if name := gcCommandName(c); name != "" {
		return name
	}
	return fmt.Sprintf("command(%d)", uint8(c))
}

// upsertWorkloadCmd registers or updates a workload and its evaluation.
type upsertWorkloadCmd struct {
	Workload *api.Workload   `json:"workload"`
	Eval     *api.Evaluation `json:"eval"`
	// Deployment, when set, starts the deployment of this version (a
	// destructive update of a running workload, deployments.go).
	Deployment *api.Deployment `json:"deployment,omitempty"`
	// CheckIndex, when set, applies the command only if the stored
	// workload's ModifyIndex is still this (0: no workload of that name);
	// otherwise nothing is written (strata run --check-index).
	CheckIndex *uint64 `json:"checkIndex,omitempty"`
}

// stopWorkloadCmd marks a workload stopped, or purges it.
type stopWorkloadCmd struct {
	Namespace string          `json:"namespace,omitempty"` // "": the default namespace (entries from before namespaces)
	Name      string          `json:"name"`
	Purge     bool            `json:"purge"`
	Eval      *api.Evaluation `json:"eval"`
	Time      time.Time       `json:"time"` // stamped by the proposer, for events
}

// upsertNodeCmd registers a node (and re-evaluates blocked work).
type upsertNodeCmd struct {
	Node *api.Node `json:"node"`
	// Key, when set, is the node's key: given with the node's first
	// registration, checked on every later one (the FSM refuses a
	// different key: ErrNodeIDTaken).
	Key   *state.NodeKey    `json:"key,omitempty"`
	Evals []*api.Evaluation `json:"evals,omitempty"`
	Time  time.Time         `json:"time"` // stamped by the proposer, for events
	// Notices are what the agent has to say (api.Node.AgentNotices), each
	// an event; they are not stored on the node.
	Notices []string `json:"notices,omitempty"`
}

// nodeStatusCmd changes a node's status, with the evaluations that follow.
type nodeStatusCmd struct {
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

// upsertEvalsCmd stores evaluations (new ones, or status updates).
type upsertEvalsCmd struct {
	Evals []*api.Evaluation `json:"evals"`
}

// applyPlanCmd is what the plan applier commits of one plan, as the FSM
// applies it. Old logs hold it as it is (cmdApplyPlan); the plan applier
// now writes it in parts (cmdApplyPlanPart, planentry.go), each of which
// decodes into one applyPlanCmd.
type applyPlanCmd struct {
	Place []*api.Allocation `json:"place,omitempty"`
	Stop  []api.StopRequest `json:"stop,omitempty"`
	// Eval, when set, is the plan's evaluation with its final status.
	Eval *api.Evaluation `json:"eval,omitempty"`
	// Evals re-evaluate the workloads whose allocations this plan preempted.
	Evals []*api.Evaluation `json:"evals,omitempty"`
	Time  time.Time         `json:"time"` // stamped by the proposer, for events
	// Deployment is the plan's word on its workload's deployment (with
	// the outcome, in the last part).
	Deployment *api.DeploymentProgress `json:"deployment,omitempty"`
	// InPlace moves allocations to a new version without a restart.
	InPlace []api.InPlaceUpdate `json:"inPlace,omitempty"`
	// Part and Parts number the entries of a plan written in parts (1..Parts);
	// zero in a plan written whole.
	Part  int `json:"-"`
	Parts int `json:"-"`
}

// allocClientUpdateCmd carries agents' reports and the evaluations they cause.
type allocClientUpdateCmd struct {
	Updates []*api.AllocUpdate `json:"updates"`
	Evals   []*api.Evaluation  `json:"evals,omitempty"`
	Time    time.Time          `json:"time"` // stamped by the proposer, for events
}

// setCellConfigCmd replaces the cell configuration.
type setCellConfigCmd struct {
	Config *api.CellConfig `json:"config"`
	Time   time.Time       `json:"time"` // stamped by the proposer, for events
}

// encodeCommand frames a command as one type byte followed by JSON.
func encodeCommand(t commandType, body any) ([]byte, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", t, err)
	}
	return append([]byte{byte(t)}, b...), nil
}
