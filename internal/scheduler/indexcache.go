package scheduler

import (
	"sync/atomic"

	"github.com/strata-dev/strata/api"
)

// TopologyVersioner is implemented by a State that counts changes of its
// nodes' topology — a node added or removed, its labels or NUMA layout
// changed. Two snapshots with the same source and version have nodes with
// the same ids, labels and layouts in the same order, whatever else
// (allocations, statuses) changed between them. source names what counts
// (a store: one restored from a raft snapshot counts anew, so its versions
// mean nothing next to the old store's); it must be comparable, and nil
// means the snapshot cannot say. The scheduler defines what it needs of a
// snapshot; the data layer only counts.
type TopologyVersioner interface {
	TopologyVersion() (source any, version uint64)
}

// IndexCache keeps one NodeIndex per topology version for a State whose
// node objects are replaced while their labels and layouts stay (the
// server's store, where every allocation write copies the node to update
// Allocated), and binds its tables to each snapshot's own nodes. It is
// safe for concurrent use by the workers; the zero value is ready.
type IndexCache struct {
	cur atomic.Pointer[versionedIndex]
}

type versionedIndex struct {
	source  any
	version uint64
	ix      *NodeIndex
}

// Bind returns st as a State that offers the engine a NodeIndex of its
// nodes, sharing the tables of every snapshot with the same topology
// source and version. A State that does not implement TopologyVersioner,
// or cannot name its source, is returned as it is.
func (c *IndexCache) Bind(st State) State {
	tv, ok := st.(TopologyVersioner)
	if !ok {
		return st
	}
	source, version := tv.TopologyVersion()
	if source == nil {
		return st
	}
	return boundState{State: st, ix: c.index(source, version, st)}
}

func (c *IndexCache) index(source any, version uint64, st State) *NodeIndex {
	nodes := st.Nodes()
	cached := c.cur.Load()
	if cached != nil && cached.source == source && cached.version == version {
		return cached.ix.For(nodes)
	}
	ix := NewNodeIndex(nodes)
	// Keep the newest of a source: an older snapshot asking late must not
	// evict it. Another source (a restored store) replaces it.
	for cached == nil || cached.source != source || cached.version < version {
		if c.cur.CompareAndSwap(cached, &versionedIndex{source: source, version: version, ix: ix}) {
			break
		}
		cached = c.cur.Load()
	}
	return ix
}

// current is the index kept now (tests).
func (c *IndexCache) current() *NodeIndex {
	if v := c.cur.Load(); v != nil {
		return v.ix
	}
	return nil
}

// boundState is a State with the NodeIndex its cache bound to it.
type boundState struct {
	State
	ix *NodeIndex
}

func (s boundState) NodeIndex() *NodeIndex { return s.ix }

// LatestDeployment passes the bound State's deployments through.
func (b boundState) LatestDeployment(namespace, workload string) *api.Deployment {
	if dr, ok := b.State.(DeploymentReader); ok {
		return dr.LatestDeployment(namespace, workload)
	}
	return nil
}
