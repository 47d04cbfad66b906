package state

import (
	"sync"

	"github.com/hashicorp/go-memdb"

	"github.com/strata-dev/strata/api"
)

// Snapshot is an immutable, consistent view of the store at one index. It
// satisfies scheduler.State. Objects it returns are shared with the store and
// must not be modified; Copy them first.
type Snapshot struct {
	txn   *memdb.Txn
	store *Store // nil for a write transaction's view

	nodesOnce sync.Once
	nodes     []*api.Node
}

// Index returns the highest raft index applied in this snapshot.
func (s *Snapshot) Index() uint64 {
	var max uint64
	it, err := s.txn.Get(tableIndex, "id")
	if err != nil {
		return 0
	}
	for obj := it.Next(); obj != nil; obj = it.Next() {
		if v := obj.(*indexEntry).Value; v > max {
			max = v
		}
	}
	return max
}

// TableIndex returns the index that last modified table, watching it in ws.
func (s *Snapshot) TableIndex(ws memdb.WatchSet, table string) uint64 {
	ch, obj, err := s.txn.FirstWatch(tableIndex, "id", table)
	if err != nil {
		return 0
	}
	if ws != nil {
		ws.Add(ch)
	}
	if obj == nil {
		return 0
	}
	return obj.(*indexEntry).Value
}

// Exported table names for TableIndex.
const (
	TableWorkloads = tableWorkloads
	TableNodes     = tableNodes
	TableAllocs    = tableAllocs
	TableEvals     = tableEvals
	TableEvents    = tableEvents
	TableConfig    = tableConfig
)

// Workload returns the workload named name in namespace ns ("": the
// default namespace) or nil.
func (s *Snapshot) Workload(ns, name string) *api.Workload {
	obj, err := s.txn.First(tableWorkloads, "id", ns, name)
	if err != nil || obj == nil {
		return nil
	}
	return obj.(*api.Workload)
}

// Workloads returns every workload, sorted by namespace and name.
func (s *Snapshot) Workloads(ws memdb.WatchSet) []*api.Workload {
	return s.workloads(ws, "id")
}

// WorkloadsIn returns the workloads of namespace ns, sorted by name.
func (s *Snapshot) WorkloadsIn(ws memdb.WatchSet, ns string) []*api.Workload {
	return s.workloads(ws, "namespace", ns)
}

func (s *Snapshot) workloads(ws memdb.WatchSet, index string, args ...interface{}) []*api.Workload {
	var out []*api.Workload
	it, err := s.txn.Get(tableWorkloads, index, args...)
	if err != nil {
		return nil
	}
	if ws != nil {
		ws.Add(it.WatchCh())
	}
	for obj := it.Next(); obj != nil; obj = it.Next() {
		out = append(out, obj.(*api.Workload))
	}
	return out
}

// Node returns the node with id or nil.
func (s *Snapshot) Node(id string) *api.Node {
	obj, err := s.txn.First(tableNodes, "id", id)
	if err != nil || obj == nil {
		return nil
	}
	return obj.(*api.Node)
}

// Nodes returns every node, sorted by id. It is read once per snapshot:
// every call returns the same slice, which callers must not modify (the
// scheduler's NodeIndex describes it).
func (s *Snapshot) Nodes() []*api.Node {
	s.nodesOnce.Do(func() { s.nodes = s.NodesWatch(nil) })
	return s.nodes
}

// NodesWatch is Nodes, adding the table's watch channel to ws.
func (s *Snapshot) NodesWatch(ws memdb.WatchSet) []*api.Node {
	var out []*api.Node
	it, err := s.txn.Get(tableNodes, "id")
	if err != nil {
		return nil
	}
	if ws != nil {
		ws.Add(it.WatchCh())
	}
	for obj := it.Next(); obj != nil; obj = it.Next() {
		out = append(out, obj.(*api.Node))
	}
	return out
}

// Alloc returns the allocation with id or nil.
func (s *Snapshot) Alloc(id string) *api.Allocation {
	obj, err := s.txn.First(tableAllocs, "id", id)
	if err != nil || obj == nil {
		return nil
	}
	return obj.(*api.Allocation)
}

// Allocs returns every allocation, sorted by id.
func (s *Snapshot) Allocs(ws memdb.WatchSet) []*api.Allocation {
	return s.allocs(ws, "id")
}

// AllocsByNode returns the node's allocations (any status).
func (s *Snapshot) AllocsByNode(nodeID string) []*api.Allocation {
	return s.AllocsByNodeWatch(nil, nodeID)
}

// AllocsByNodeWatch is AllocsByNode, adding a watch to ws.
func (s *Snapshot) AllocsByNodeWatch(ws memdb.WatchSet, nodeID string) []*api.Allocation {
	return s.allocs(ws, "node", nodeID)
}

// AllocsByWorkload returns the allocations (any status) of workload name
// in namespace ns.
func (s *Snapshot) AllocsByWorkload(ns, name string) []*api.Allocation {
	return s.AllocsByWorkloadWatch(nil, ns, name)
}

// AllocsByWorkloadWatch is AllocsByWorkload, adding a watch to ws.
func (s *Snapshot) AllocsByWorkloadWatch(ws memdb.WatchSet, ns, name string) []*api.Allocation {
	return s.allocs(ws, "workload", ns, name)
}

func (s *Snapshot) allocs(ws memdb.WatchSet, index string, args ...interface{}) []*api.Allocation {
	it, err := s.txn.Get(tableAllocs, index, args...)
	if err != nil {
		return nil
	}
	if ws != nil {
		ws.Add(it.WatchCh())
	}
	var out []*api.Allocation
	for obj := it.Next(); obj != nil; obj = it.Next() {
		out = append(out, obj.(*api.Allocation))
	}
	return out
}

// Eval returns the evaluation with id or nil.
func (s *Snapshot) Eval(id string) *api.Evaluation {
	obj, err := s.txn.First(tableEvals, "id", id)
	if err != nil || obj == nil {
		return nil
	}
	return obj.(*api.Evaluation)
}

// Evals returns every evaluation, sorted by id.
func (s *Snapshot) Evals(ws memdb.WatchSet) []*api.Evaluation {
	return s.evals(ws, "id")
}

// EvalsByWorkload returns the evaluations of workload name in namespace ns.
func (s *Snapshot) EvalsByWorkload(ws memdb.WatchSet, ns, name string) []*api.Evaluation {
	return s.evals(ws, "workload", ns, name)
}

func (s *Snapshot) evals(ws memdb.WatchSet, index string, args ...interface{}) []*api.Evaluation {
	it, err := s.txn.Get(tableEvals, index, args...)
	if err != nil {
		return nil
	}
	if ws != nil {
		ws.Add(it.WatchCh())
	}
	var out []*api.Evaluation
	for obj := it.Next(); obj != nil; obj = it.Next() {
		out = append(out, obj.(*api.Evaluation))
	}
	return out
}

// AllocsByIDPrefix returns the allocations whose id starts with prefix, so
// users can name an allocation by its first characters.
func (s *Snapshot) AllocsByIDPrefix(prefix string) []*api.Allocation {
	return s.allocs(nil, "id_prefix", prefix)
}

// EvalsByIDPrefix returns the evaluations whose id starts with prefix.
func (s *Snapshot) EvalsByIDPrefix(prefix string) []*api.Evaluation {
	return s.evals(nil, "id_prefix", prefix)
}

// CellID returns the cell's identity, "" until the cell's first leader
// created it.
func (s *Snapshot) CellID() string {
	obj, err := s.txn.First(tableConfig, "id", cellIdentityID)
	if err != nil || obj == nil {
		return ""
	}
	return obj.(*configRow).CellID
}

// CellConfig returns the cell configuration; the empty one (never nil)
// when none was set.
func (s *Snapshot) CellConfig() *api.CellConfig {
	obj, err := s.txn.First(tableConfig, "id", cellConfigID)
	if err != nil || obj == nil {
		return &api.CellConfig{}
	}
	return obj.(*configRow).Config
}
