package state

import (
	"maps"
	"slices"
	"sync/atomic"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/scheduler"
)

// The scheduler derives tables from the nodes' labels and NUMA layouts
// (label values as ids, topology domains, core layouts) and may keep them
// across evaluations in a scheduler.NodeIndex. The nodes table's own index
// cannot say when they are stale: every allocation write copies the node
// to update Allocated, so it moves with every plan. The store therefore
// counts changes of the node topology — a node added, its labels or NUMA
// layout changed — in the counters table, and keeps one NodeIndex per
// count. Snapshots at the same count share its tables, bound to each
// snapshot's own node objects; the tables are immutable once built and
// safe for the scheduler workers to share.

// topologyKey is the counters-table row that counts node topology changes.
const topologyKey = "nodeTopology"

// topologyIndex is the store's NodeIndex for one topology count.
type topologyIndex struct {
	count uint64
	ix    *scheduler.NodeIndex
}

var _ scheduler.NodeIndexer = (*Snapshot)(nil)

// NodeIndex returns an index of the snapshot's nodes (the slice Nodes
// returns) for the scheduler, sharing the tables of every snapshot with
// the same node topology. A snapshot of a write transaction has none.
func (s *Snapshot) NodeIndex() *scheduler.NodeIndex {
	if s.store == nil {
		return nil
	}
	count := s.topologyCount()
	nodes := s.Nodes()
	cached := s.store.topology.Load()
	if cached != nil && cached.count == count {
		return cached.ix.For(nodes)
	}
	ix := scheduler.NewNodeIndex(nodes)
	// Keep the newest: an older snapshot asking late must not evict it.
	for cached == nil || cached.count < count {
		if s.store.topology.CompareAndSwap(cached, &topologyIndex{count: count, ix: ix}) {
			break
		}
		cached = s.store.topology.Load()
	}
	return ix
}

// topologyCount is how many node topology changes the snapshot has seen.
func (s *Snapshot) topologyCount() uint64 {
	obj, err := s.txn.First(tableCounters, "id", topologyKey)
	if err != nil || obj == nil {
		return 0
	}
	return obj.(*indexEntry).Value
}

// noteTopology records a node write: when it adds a node or changes its
// labels or NUMA layout, the topology count moves on. Every write that
// adds, removes or relabels a node must call it, or snapshots would share
// tables that no longer describe their nodes.
func (w *WriteTxn) noteTopology(old, n *api.Node) error {
	if old != nil && maps.Equal(old.Labels, n.Labels) && sameNUMA(old.NUMA, n.NUMA) {
		return nil
	}
	count := w.Snapshot().topologyCount() + 1
	return w.txn.Insert(tableCounters, &indexEntry{Table: topologyKey, Value: count})
}

func sameNUMA(a, b []api.NUMANode) bool {
	return slices.EqualFunc(a, b, func(x, y api.NUMANode) bool {
		return x.ID == y.ID && x.MemoryBytes == y.MemoryBytes && slices.Equal(x.CPUs, y.CPUs)
	})
}

// topologyCache is the part of a Store that keeps the NodeIndex.
type topologyCache struct {
	topology atomic.Pointer[topologyIndex]
}
