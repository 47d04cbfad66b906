package server

import (
	"fmt"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/state"
)

// Node operations, each one raft command (cmdNodeOp) with its events: an
// operator cordons, drains, quarantines or purges a node through the API
// (endpoints_nodeops.go); the drainer ends drains that are done
// (drainer.go). The proposer stamps every time (the drain's deadline
// too) and makes the evaluations the change causes; Apply only stores.
const (
	nodeOpDisable     = "disable"      // cordon: no new work
	nodeOpEnable      = "enable"       // uncordon
	nodeOpDrain       = "drain"        // start (or replace) a drain
	nodeOpDrainCancel = "drain-cancel" // an operator ends a drain
	nodeOpDrainDone   = "drain-done"   // the drainer: nothing left to move
	nodeOpQuarantine  = "quarantine"   // fence off and drain
	nodeOpLift        = "lift"         // end a quarantine (and its drain)
	nodeOpPurge       = "purge"        // remove a dead node, its allocations lost
)

// nodeOpCmd is one node operation.
type nodeOpCmd struct {
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

func applyNodeOp(w *state.WriteTxn, c *nodeOpCmd) error {
	switch c.Op {
	case nodeOpDisable, nodeOpEnable:
		return w.SetNodeEligibility(c.NodeID, c.Op == nodeOpEnable)
	case nodeOpDrain:
		if c.Drain == nil {
			return fmt.Errorf("node-op %s: no drain", c.Op)
		}
		return w.StartDrain(c.NodeID, *c.Drain)
	case nodeOpDrainCancel, nodeOpDrainDone:
		if !endsCurrentDrain(w.Snapshot(), c) {
			return nil // the drain it meant ended already, or another replaced it
		}
		return w.EndDrain(c.NodeID)
	case nodeOpQuarantine:
		if c.Drain == nil || c.Quarantine == nil {
			return fmt.Errorf("node-op %s: no quarantine or drain", c.Op)
		}
		if !autoQuarantineApplies(w.Snapshot(), c) {
			return nil
		}
		return w.QuarantineNode(c.NodeID, *c.Quarantine, *c.Drain)
	case nodeOpLift:
		return w.LiftQuarantine(c.NodeID, c.Time)
	case nodeOpPurge:
		_, err := w.PurgeNode(c.NodeID, nodeLostReason)
		return err
	}
	return fmt.Errorf("node-op: unknown operation %q", c.Op)
}

// endsCurrentDrain reports whether a drain-done or drain-cancel ends the
// node's drain now: the drainer names the drain it saw done (its start),
// so a drain started again meanwhile is not ended by the old one's
// completion.
func endsCurrentDrain(snap *state.Snapshot, c *nodeOpCmd) bool {
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
func autoQuarantineApplies(snap *state.Snapshot, c *nodeOpCmd) bool {
	if c.Quarantine == nil || !c.Quarantine.Auto {
		return true
	}
	n := snap.Node(c.NodeID)
	return n != nil && n.Quarantine == nil && n.ModifyIndex == c.SeenIndex
}

// nodeOpEvents describes a node operation, from the state before it.
func nodeOpEvents(snap *state.Snapshot, c *nodeOpCmd) []api.Event {
	n := snap.Node(c.NodeID)
	if n == nil {
		return nil
	}
	ev := func(t, format string, args ...any) []api.Event {
		return []api.Event{{Time: c.Time, Type: t, NodeID: n.ID, Message: fmt.Sprintf("node %s ", n.Name) + fmt.Sprintf(format, args...)}}
	}
	switch c.Op {
	case nodeOpDisable:
		return ev(api.EventNodeEligibility, "ineligible: takes no new work")
	case nodeOpEnable:
		return ev(api.EventNodeEligibility, "eligible: takes new work")
	case nodeOpDrain:
		if c.Drain == nil {
			return nil
		}
		keep := ""
		if c.Drain.KeepSystem {
			keep = ", keeping system workloads"
		}
		return ev(api.EventNodeDrain, "draining %d allocations by %s%s", moveable(snap, n.ID, c.Drain), c.Drain.Deadline.UTC().Format(time.RFC3339), keep)
	case nodeOpDrainCancel:
		if !endsCurrentDrain(snap, c) {
			return nil
		}
		return ev(api.EventNodeDrain, "drain cancelled; the node stays ineligible")
	case nodeOpDrainDone:
		if !endsCurrentDrain(snap, c) {
			return nil
		}
		return ev(api.EventNodeDrain, "drain complete; the node stays ineligible")
	case nodeOpQuarantine:
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
		return ev(api.EventNodeQuarantine, "%s: %s (draining %d allocations)", how, c.Quarantine.Reason, moveable(snap, n.ID, c.Drain))
	case nodeOpLift:
		return ev(api.EventNodeQuarantine, "quarantine lifted; eligible again")
	case nodeOpPurge:
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

// moveable counts node id's allocations a drain d has to move: those still
// holding the node, except what d keeps (system workloads).
func moveable(snap *state.Snapshot, id string, d *api.DrainSpec) int {
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
