package state

import (
	"fmt"
	"time"

	"github.com/strata-dev/strata/api"
)

// MarkNodeDown sets a node down and records when it was last heard from
// and the lease that heartbeat renewed: the scheduler derives from them
// when the node's allocations are lost and when an at-most-once copy may
// be replaced. It records at, when the node was marked down, among its
// last downs (api.Node.Downs, for flap detection). Every time was decided
// by the proposer.
func (w *WriteTxn) MarkNodeDown(id, reason string, at, lastHeartbeat time.Time, lease time.Duration) error {
	old := w.Snapshot().Node(id)
	if old == nil {
		return fmt.Errorf("node %q: %w", id, ErrNotFound)
	}
	n := old.Copy()
	n.Status, n.StatusReason, n.ModifyIndex = api.NodeDown, reason, w.index
	if !at.IsZero() {
		n.Downs = append(n.Downs, at)
		if len(n.Downs) > api.MaxNodeDowns {
			n.Downs = n.Downs[len(n.Downs)-api.MaxNodeDowns:]
		}
	}
	if !lastHeartbeat.IsZero() {
		n.LastHeartbeat, n.LeaseTTL = lastHeartbeat, lease
	}
	return w.insert(tableNodes, n)
}
