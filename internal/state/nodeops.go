package state

import (
	"errors"
	"fmt"
	"time"

	"github.com/strata-dev/strata/api"
)

// ErrNodeAlive refuses to purge a node whose agent is still heard from:
// purge is for dead nodes, whose allocations nobody will ever report on.
var ErrNodeAlive = errors.New("node is alive")

// Operator state of nodes (api.Node.Eligibility, Drain, Quarantine) is the
// server's: agents that register never set or clear it (UpsertNode keeps
// it), and a node's status word follows from it while the node is alive
// (api.Node.LiveStatus).

// changeNode applies change to a copy of node id and stores it, with the
// status its new operator state gives it when it is alive.
func (w *WriteTxn) changeNode(id string, change func(n *api.Node)) error {
	old := w.Snapshot().Node(id)
	if old == nil {
		return fmt.Errorf("node %q: %w", id, ErrNotFound)
	}
	n := old.Copy()
	change(n)
	if n.Alive() {
		n.Status = n.LiveStatus()
	}
	n.ModifyIndex = w.index
	return w.insert(tableNodes, n)
}

// SetNodeEligibility cordons (false) or uncordons (true) a node.
func (w *WriteTxn) SetNodeEligibility(id string, eligible bool) error {
	return w.changeNode(id, func(n *api.Node) {
		n.Eligibility = api.NodeIneligible
		if eligible {
			n.Eligibility = api.NodeEligible
		}
	})
}

// StartDrain starts (or replaces) a drain of node id; a draining node is
// ineligible, and stays so when the drain ends.
func (w *WriteTxn) StartDrain(id string, d api.DrainSpec) error {
	return w.changeNode(id, func(n *api.Node) {
		n.Drain, n.Eligibility = &d, api.NodeIneligible
	})
}

// EndDrain ends node id's drain (done or cancelled); the node stays
// ineligible until an operator enables it.
func (w *WriteTxn) EndDrain(id string) error {
	return w.changeNode(id, func(n *api.Node) { n.Drain = nil })
}

// QuarantineNode fences node id off: ineligible, quarantined with q, and
// drained by d.
func (w *WriteTxn) QuarantineNode(id string, q api.Quarantine, d api.DrainSpec) error {
	return w.changeNode(id, func(n *api.Node) {
		n.Quarantine, n.Drain, n.Eligibility = &q, &d, api.NodeIneligible
	})
}

// LiftQuarantine ends node id's quarantine and its drain, and makes it
// eligible again; at (the proposer's time) is remembered, so that
// automatic quarantine weighs no evidence from before it.
func (w *WriteTxn) LiftQuarantine(id string, at time.Time) error {
	return w.changeNode(id, func(n *api.Node) {
		n.Quarantine, n.Drain, n.Eligibility = nil, nil, api.NodeEligible
		n.QuarantineLifted = at
	})
}

// PurgeNode removes a dead node: its allocations that still held it are
// marked lost (stopped, so their workloads replace them), allocations of
// workloads that no longer exist are collected, and the node leaves the
// table. It returns how many allocations it marked lost.
func (w *WriteTxn) PurgeNode(id, reason string) (int, error) {
	old := w.Snapshot().Node(id)
	if old == nil {
		return 0, fmt.Errorf("node %q: %w", id, ErrNotFound)
	}
	if old.Alive() {
		return 0, fmt.Errorf("purge node %q (%s): %w", id, old.Status, ErrNodeAlive)
	}
	lost := 0
	for _, a := range w.Snapshot().AllocsByNode(id) {
		if !a.Terminal() || a.DesiredStatus == api.DesiredRun {
			if err := w.StopAllocRequest(api.StopRequest{AllocID: a.ID, Reason: reason, Lost: true}); err != nil {
				return 0, err
			}
			lost++
		}
	}
	// The node is gone: nothing is left to account on it.
	if err := w.txn.Delete(tableNodes, w.Snapshot().Node(id)); err != nil {
		return 0, fmt.Errorf("delete node %q: %w", id, err)
	}
	w.touched[tableNodes] = true
	if err := w.noteTopology(old, nil); err != nil {
		return 0, err
	}
	for _, a := range w.Snapshot().AllocsByNode(id) {
		if err := w.collectIfOrphan(a); err != nil {
			return 0, err
		}
	}
	return lost, nil
}
