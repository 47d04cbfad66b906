package state

import (
	"fmt"

	"github.com/strata-dev/strata/api"
)

// Allocations of a purged workload are collected once they are terminal:
// they leave every listing and never mix with a new workload of the same
// name. A workload's incarnation is told by its CreateIndex (the raft
// index of its first registration, kept across updates): an allocation
// created before it belongs to an earlier workload of that name.

// OfEarlierIncarnation reports whether a belongs to no stored workload: its
// workload was purged, or purged and registered again since a was made.
func (s *Snapshot) OfEarlierIncarnation(a *api.Allocation) bool {
	wl := s.Workload(a.Workload)
	return wl == nil || (a.CreateIndex != 0 && a.CreateIndex < wl.CreateIndex)
}

// CollectIfOrphan deletes allocation id when it is terminal and of no
// stored workload (OfEarlierIncarnation). The FSM calls it after a stop or
// an agent's report; its agent, which no longer sees it listed, forgets it.
func (w *WriteTxn) CollectIfOrphan(id string) error {
	if a := w.Snapshot().Alloc(id); a != nil {
		return w.collectIfOrphan(a)
	}
	return nil
}

// collectIfOrphan deletes a when it is terminal and of no stored workload.
func (w *WriteTxn) collectIfOrphan(a *api.Allocation) error {
	if !a.Terminal() || !w.Snapshot().OfEarlierIncarnation(a) {
		return nil
	}
	return w.deleteAlloc(a)
}

// deleteAlloc removes an allocation, taking what it still holds off its
// node's accounting.
func (w *WriteTxn) deleteAlloc(a *api.Allocation) error {
	if !a.Terminal() {
		if err := w.addToNode(a.NodeID, negate(a.Resources)); err != nil {
			return err
		}
	}
	w.touched[tableAllocs] = true
	if err := w.txn.Delete(tableAllocs, a); err != nil {
		return fmt.Errorf("delete allocation %q: %w", a.ID, err)
	}
	return nil
}

// collectWorkload deletes the terminal allocations of workload name, which
// was just purged; the live ones follow as they stop.
func (w *WriteTxn) collectWorkload(name string) error {
	for _, a := range w.Snapshot().AllocsByWorkload(name) {
		if err := w.collectIfOrphan(a); err != nil {
			return err
		}
	}
	return nil
}

// Current drops from allocs those of an earlier incarnation of a stored
// workload (created before the workload of that name was registered
// again): listings never mix them with the new workload's. A purged
// workload with no successor keeps its allocations listed while they stop
// (so a client can watch the purge finish); they leave the listings as
// they are collected.
func (s *Snapshot) Current(allocs []*api.Allocation) []*api.Allocation {
	out := allocs[:0:0]
	created := map[string]uint64{} // workload → CreateIndex, 0 when not stored
	for _, a := range allocs {
		ci, seen := created[a.Workload]
		if !seen {
			if wl := s.Workload(a.Workload); wl != nil {
				ci = wl.CreateIndex
			}
			created[a.Workload] = ci
		}
		if a.CreateIndex == 0 || a.CreateIndex >= ci {
			out = append(out, a)
		}
	}
	return out
}
