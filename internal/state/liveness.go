package state

import (
	"fmt"
	"time"

	"github.com/strata-dev/strata/api"
)

// MarkNodeDown sets a node down and records when it was last heard from
// and the lease that heartbeat renewed: the scheduler derives from them
// when the node's allocations are lost and when an at-most-once copy may
// be replaced. Both times were decided by the proposer.
func (w *WriteTxn) MarkNodeDown(id, reason string, lastHeartbeat time.Time, lease time.Duration) error {
	old := w.Snapshot().Node(id)
	if old == nil {
		return fmt.Errorf("node %q: %w", id, ErrNotFound)
	}
	n := old.Copy()
	n.Status, n.StatusReason, n.ModifyIndex = api.NodeDown, reason, w.index
	if !lastHeartbeat.IsZero() {
		n.LastHeartbeat, n.LeaseTTL = lastHeartbeat, lease
	}
	return w.insert(tableNodes, n)
}
