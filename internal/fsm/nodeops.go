package fsm

import (
	"fmt"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/state"
)

// Node operations, each one node-op command with its events: an operator
// cordons, drains, quarantines or purges a node through the API; the
// leader's drainer ends drains that are done and its automatic quarantine
// fences failing nodes. The proposer stamps every time (the drain's
// deadline too) and makes the evaluations the change causes; Apply only
// stores.
const (
	NodeOpDisable     = "disable"      // cordon: no new work
	NodeOpEnable      = "enable"       // uncordon
	NodeOpDrain       = "drain"        // start (or replace) a drain
	NodeOpDrainCancel = "drain-cancel" // an operator ends a drain
	NodeOpDrainDone   = "drain-done"   // the drainer: nothing left to move
	NodeOpQuarantine  = "quarantine"   // fence off and drain
	NodeOpLift        = "lift"         // end a quarantine (and its drain)
	NodeOpPurge       = "purge"        // remove a dead node, its allocations lost
)

// NodeOp is one node operation.
type NodeOp struct {
	Op         string            `json:"op"`
	NodeID     string            `json:"nodeId"`
	Drain      *api.DrainSpec    `json:"drain,omitempty"`      // drain, quarantine; drain-done: the drain that is done
	Quarantine *api.Quarantine   `json:"quarantine,omitempty"` // quarantine
	Evals      []*api.Evaluation `json:"evals,omitempty"`
	Time       time.Time         `json:"time"` // stamped by the proposer, for events
	// SeenIndex is the node's ModifyIndex in the view an automatic
	// quarantine was decided on: it applies only to that node.
	SeenIndex uint64 `json:"seenIndex,omitempty"`
}

// nodeLostReason is the reason a purge gives the allocations it marks lost.
const nodeLostReason = "node purged"

func applyNodeOp(w *state.WriteTxn, c *NodeOp) error {
	if err := changeNode(w, c); err != nil {
		return err
	}
	return upsertEvals(w, c.Evals)
}

func changeNode(w *state.WriteTxn, c *NodeOp) error {
	switch c.Op {
	case NodeOpDisable, NodeOpEnable:
		return w.SetNodeEligibility(c.NodeID, c.Op == NodeOpEnable)
	case NodeOpDrain:
		if c.Drain == nil {
			return fmt.Errorf("node-op %s: no drain", c.Op)
		}
		return w.StartDrain(c.NodeID, *c.Drain)
	case NodeOpDrainCancel, NodeOpDrainDone:
		if !endsCurrentDrain(w.Snapshot(), c) {
			return nil // the drain it meant ended already, or another replaced it
		}
		return w.EndDrain(c.NodeID)
	case NodeOpQuarantine:
		if c.Drain == nil || c.Quarantine == nil {
			return fmt.Errorf("node-op %s: no quarantine or drain", c.Op)
		}
		if !autoQuarantineApplies(w.Snapshot(), c) {
			return nil
		}
		return w.QuarantineNode(c.NodeID, *c.Quarantine, *c.Drain)
	case NodeOpLift:
		return w.LiftQuarantine(c.NodeID, c.Time)
	case NodeOpPurge:
		_, err := w.PurgeNode(c.NodeID, nodeLostReason)
		return err
	}
	return fmt.Errorf("node-op: unknown operation %q", c.Op)
}

// endsCurrentDrain reports whether a drain-done or drain-cancel ends the
// node's drain now: the drainer names the drain it saw done (its start),
// so a drain started again meanwhile is not ended by the old one's
// completion.
func endsCurrentDrain(snap *state.Snapshot, c *NodeOp) bool {
	n := snap.Node(c.NodeID)
	if n == nil || n.Drain == nil {
		return false
	}
	return c.Drain == nil || n.Drain.StartedAt.Equal(c.Drain.StartedAt)
}

// autoQuarantineApplies reports whether a quarantine command takes effect:
// an operator's always does; the leader's automatic one only when the node
// is as the leader saw it (no lift, quarantine, registration or status
// change came first in the log: the next check judges it afresh).
func autoQuarantineApplies(snap *state.Snapshot, c *NodeOp) bool {
	if c.Quarantine == nil || !c.Quarantine.Auto {
		return true
	}
	n := snap.Node(c.NodeID)
	return n != nil && n.Quarantine == nil && n.ModifyIndex == c.SeenIndex
}

// nodeOpEvents describes a node operation, from the state before it.
func nodeOpEvents(snap *state.Snapshot, c *NodeOp) []api.Event {
	n := snap.Node(c.NodeID)
	if n == nil {
		return nil
	}
	ev := func(t, format string, args ...any) []api.Event {
		return []api.Event{{Time: c.Time, Type: t, NodeID: n.ID, Message: fmt.Sprintf("node %s ", n.Name) + fmt.Sprintf(format, args...)}}
	}
	switch c.Op {
	case NodeOpDisable:
		return ev(api.EventNodeEligibility, "ineligible: takes no new work")
	case NodeOpEnable:
		return ev(api.EventNodeEligibility, "eligible: takes new work")
	case NodeOpDrain:
		if c.Drain == nil {
			return nil
		}
		keep := ""
		if c.Drain.KeepSystem {
			keep = ", keeping system workloads"
		}
		return ev(api.EventNodeDrain, "draining %d allocations by %s%s", DrainRemaining(snap, n.ID, c.Drain), c.Drain.Deadline.UTC().Format(time.RFC3339), keep)
	case NodeOpDrainCancel:
		if !endsCurrentDrain(snap, c) {
			return nil
		}
		return ev(api.EventNodeDrain, "drain cancelled; the node stays ineligible")
	case NodeOpDrainDone:
		if !endsCurrentDrain(snap, c) {
			return nil
		}
		return ev(api.EventNodeDrain, "drain complete; the node stays ineligible")
	case NodeOpQuarantine:
		if c.Quarantine == nil {
			return nil
		}
		if !autoQuarantineApplies(snap, c) {
			return nil
		}
		how := "quarantined"
		if c.Quarantine.Auto {
			how = "quarantined automatically"
		}
		return ev(api.EventNodeQuarantine, "%s: %s (draining %d allocations)", how, c.Quarantine.Reason, DrainRemaining(snap, n.ID, c.Drain))
	case NodeOpLift:
		return ev(api.EventNodeQuarantine, "quarantine lifted; eligible again")
	case NodeOpPurge:
		lost := 0
		for _, a := range snap.AllocsByNode(n.ID) {
			if !a.Terminal() {
				lost++
			}
		}
		return ev(api.EventNodePurged, "purged (%s); %d allocations lost", n.Status, lost)
	}
	return nil
}

// DrainRemaining counts node id's allocations a drain d has to move:
// those still holding the node, except what d keeps (system workloads).
func DrainRemaining(snap *state.Snapshot, id string, d *api.DrainSpec) int {
	n := 0
	for _, a := range snap.AllocsByNode(id) {
		if a.Terminal() {
			continue
		}
		if wl := snap.Workload(a.Namespace, a.Workload); wl != nil && d.Keeps(wl.PriorityClass) {
			continue
		}
		n++
	}
	return n
}

// nodeOpEffects: a node that takes work again brings capacity.
func nodeOpEffects(c *NodeOp) Effects {
	e := evals(c.Evals...)
	e.Unblock = c.Op == NodeOpEnable || c.Op == NodeOpLift
	return e
}
