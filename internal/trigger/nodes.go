package trigger

import (
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/fsm"
	"github.com/strata-dev/strata/internal/state"
)

// NodeDown builds the command that marks node id down with one evaluation
// per workload it holds; lastHeartbeat and lease are when the leader last
// heard from it and the lease that heartbeat renewed. nil: the node is
// gone or down already.
func (m *Maker) NodeDown(snap *state.Snapshot, id, reason string, lastHeartbeat time.Time, lease time.Duration) *fsm.NodeStatus {
	n := snap.Node(id)
	if n == nil || n.Status == api.NodeDown {
		return nil
	}
	return &fsm.NodeStatus{NodeID: id, Status: api.NodeDown, Reason: reason, Time: m.Now(),
		Evals: m.ForAllocs(snap.AllocsByNode(id), api.TriggerNodeDown, id), LastHeartbeat: lastHeartbeat, Lease: lease}
}

// NodeBack builds the command that brings down node id back ready: its
// workloads are evaluated at once, so that copies that stayed unknown and
// were replaced meanwhile are resolved (one is stopped).
func (m *Maker) NodeBack(snap *state.Snapshot, id string) *fsm.NodeStatus {
	return &fsm.NodeStatus{NodeID: id, Status: api.NodeReady, Reason: "heartbeat resumed", Time: m.Now(),
		Evals: m.ForAllocs(snap.AllocsByNode(id), api.TriggerNodeReconnect, id)}
}

// NodeOp fills a node operation's evaluations: a drain or a quarantine
// moves what the node holds, a purge replaces it.
func (m *Maker) NodeOp(snap *state.Snapshot, op *fsm.NodeOp) *fsm.NodeOp {
	switch op.Op {
	case fsm.NodeOpDrain, fsm.NodeOpQuarantine:
		op.Evals = m.ForAllocs(snap.AllocsByNode(op.NodeID), api.TriggerNodeDrain, op.NodeID)
	case fsm.NodeOpPurge:
		op.Evals = m.ForAllocs(snap.AllocsByNode(op.NodeID), api.TriggerNodePurged, op.NodeID)
	}
	return op
}

// DrainMoves makes the evaluations that move what a drain left on node
// (its deadline passed, or its migrations failed).
func (m *Maker) DrainMoves(left []*api.Allocation, node string) *fsm.UpsertEvals {
	return &fsm.UpsertEvals{Evals: m.ForAllocs(left, api.TriggerNodeDrain, node)}
}
