package state

import (
	"maps"

	"github.com/strata-dev/strata/api"
)

// The scheduler derives tables from the nodes' labels and NUMA layouts
// (label values as ids, topology domains, core layouts) and may keep them
// across evaluations. The nodes table's own index cannot say when they are
// stale: every allocation write copies the node to update Allocated, so it
// moves with every plan. The store therefore counts changes of the node
// topology — a node added, its labels or NUMA layout changed — in the
// counters table; snapshots report the count as their TopologyVersion and
// the scheduler keeps its tables per version (scheduler.IndexCache). The
// store knows nothing of the engine.

// topologyKey is the counters-table row that counts node topology changes.
const topologyKey = "nodeTopology"

// TopologyVersion is the store the snapshot is of and how many node
// topology changes it has seen (scheduler.TopologyVersioner): snapshots of
// one store with the same version hold the same nodes with the same labels
// and NUMA layouts, in the same order. A store restored from a raft
// snapshot counts anew, so the store is part of the version. A snapshot of
// a write transaction names no store.
func (s *Snapshot) TopologyVersion() (store any, version uint64) {
	if s.store != nil {
		store = s.store
	}
	return store, s.topologyCount()
}

// topologyCount is how many node topology changes the snapshot has seen.
func (s *Snapshot) topologyCount() uint64 {
	obj, err := s.txn.First(tableCounters, "id", topologyKey)
	if err != nil || obj == nil {
		return 0
	}
	return obj.(*indexEntry).Value
}

// noteTopology records a node write: when it adds a node (old nil),
// removes one (n nil) or changes its labels or NUMA layout, the topology
// count moves on. Every write that
// adds, removes or relabels a node must call it, or snapshots would share
// tables that no longer describe their nodes.
func (w *WriteTxn) noteTopology(old, n *api.Node) error {
	if old != nil && n != nil && maps.Equal(old.Labels, n.Labels) && api.SameNUMA(old.NUMA, n.NUMA) {
		return nil
	}
	count := w.Snapshot().topologyCount() + 1
	return w.txn.Insert(tableCounters, &indexEntry{Table: topologyKey, Value: count})
}
