package scheduler

import (
	"sync"
	"sync/atomic"

	"github.com/strata-dev/strata/api"
)

// NodeIndex holds what the engine derives from a set of nodes and that does
// not change while the nodes' labels and NUMA layouts do not: for each
// label key used by a rule, every node's value as a small integer, the
// topology domains relation rules count by (with each domain's nodes),
// and each node's core layout (shared by nodes of one shape). A State whose nodes stay
// the same across many snapshots (the bench's, a simulator's) builds one
// with NewNodeIndex and returns it from NodeIndex; the engine then matches
// required rules, preferences and gang domains by array lookups instead of
// a map lookup per node and rule in every evaluation.
//
// It is not part of a plan's inputs in any other sense: a plan computed
// with the index is the plan computed without it. Its tables are built on
// first use, under a lock, and never change afterwards, so one index may
// serve concurrent Schedule calls. A State whose node objects are replaced
// while their labels and layouts stay (the server's store, where every
// allocation write copies the node to update Allocated) binds the tables
// it has built to each snapshot's nodes with For.
type NodeIndex struct {
	nodes []*api.Node
	*nodeTables
}

// nodeTables is what a NodeIndex has built, shared by every NodeIndex
// made from it with For.
type nodeTables struct {
	mu      sync.Mutex
	cols    map[string]*labelColumn
	layouts []atomic.Pointer[nodeLayout] // per node, made on first use
	shapes  map[uint64][]*nodeLayout     // layouts by a hash of their NUMA fingerprint
	// doms holds the relation rules' domain indexes (tallies.go) by
	// topology key or network level, built on first use.
	doms map[string]*domainIndex
}

// NodeIndexer is implemented by a State that keeps a NodeIndex. The index
// must describe exactly the slice Nodes() returns — the same slice, so
// the same nodes in the same order — with the labels they have now;
// the engine ignores an index built on another slice or length.
type NodeIndexer interface {
	NodeIndex() *NodeIndex
}

// NewNodeIndex returns an index of nodes, the slice State.Nodes returns.
// The nodes' labels and NUMA layouts must not change while the index is
// in use.
func NewNodeIndex(nodes []*api.Node) *NodeIndex {
	return &NodeIndex{nodes: nodes, nodeTables: &nodeTables{
		cols:    make(map[string]*labelColumn),
		layouts: make([]atomic.Pointer[nodeLayout], len(nodes)),
		shapes:  make(map[uint64][]*nodeLayout),
		doms:    make(map[string]*domainIndex),
	}}
}

// For returns an index of nodes that shares the tables ix has built and
// will build. nodes must be ix's nodes as another snapshot holds them:
// the same ids in the same order, with the same labels and NUMA layouts
// (their status, capacity and allocations may differ). A slice of another
// length gets an index of its own.
func (ix *NodeIndex) For(nodes []*api.Node) *NodeIndex {
	if len(nodes) != len(ix.nodes) {
		return NewNodeIndex(nodes)
	}
	return &NodeIndex{nodes: nodes, nodeTables: ix.nodeTables}
}

// domains returns the domain index named cacheKey, building it with
// domainOf on first use. domainOf must depend only on a node's id and
// labels, and one cacheKey must always come with the same domainOf.
func (ix *NodeIndex) domains(cacheKey string, domainOf func(*api.Node) (string, bool)) *domainIndex {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if d, ok := ix.doms[cacheKey]; ok {
		return d
	}
	d := newDomainIndex(ix.nodes, domainOf)
	ix.doms[cacheKey] = d
	return d
}

// indexFor returns st's index when it describes nodes, else nil.
func indexFor(st State, nodes []*api.Node) *NodeIndex {
	ixr, ok := st.(NodeIndexer)
	if !ok {
		return nil
	}
	ix := ixr.NodeIndex()
	if ix == nil || len(ix.nodes) != len(nodes) || (len(nodes) > 0 && &ix.nodes[0] != &nodes[0]) {
		return nil
	}
	return ix
}

// labelColumn is one label key over the indexed nodes.
type labelColumn struct {
	of     []int32  // node → value id; -1: the node has no such label
	values []string // value id → value, in order of first node
}

func (ix *NodeIndex) column(key string) *labelColumn {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if col, ok := ix.cols[key]; ok {
		return col
	}
	col := newLabelColumn(ix.nodes, key)
	ix.cols[key] = col
	return col
}

// newLabelColumn reads label key of every node.
func newLabelColumn(nodes []*api.Node, key string) *labelColumn {
	of, values := internValues(len(nodes), func(i int) (string, bool) {
		v, ok := nodes[i].Labels[key]
		return v, ok
	})
	return &labelColumn{of: of, values: values}
}

// internValues gives each distinct value of nodes 0..n-1 a small id, in
// order of first node: of[i] is node i's id (-1: no value), values[id]
// the value. Label columns, domain indexes and gang domain splits all
// number values this way.
func internValues(n int, value func(i int) (string, bool)) (of []int32, values []string) {
	of = make([]int32, n)
	ids := make(map[string]int32)
	for i := range of {
		v, ok := value(i)
		if !ok {
			of[i] = -1
			continue
		}
		id, seen := ids[v]
		if !seen {
			id = int32(len(values))
			ids[v] = id
			values = append(values, v)
		}
		of[i] = id
	}
	return of, values
}

// ruleMatcher is a label rule evaluated once per value of its key.
type ruleMatcher struct {
	of      []int32
	accept  []bool // per value id
	missing bool   // the verdict for a node without the label
}

// bindRule evaluates r for every value of col (and for a missing label)
// with matchRule itself, so a matcher always agrees with it.
func bindRule(r *api.LabelRule, col *labelColumn) *ruleMatcher {
	m := &ruleMatcher{of: col.of, accept: make([]bool, len(col.values)), missing: matchRule(r, nil)}
	one := map[string]string{}
	for id, v := range col.values {
		one[r.Key] = v
		m.accept[id] = matchRule(r, one)
	}
	return m
}

func (m *ruleMatcher) match(i int) bool {
	if id := m.of[i]; id >= 0 {
		return m.accept[id]
	}
	return m.missing
}

// layout returns node i's core layout, shared with every node of the same
// NUMA fingerprint.
func (ix *NodeIndex) layout(i int) *nodeLayout {
	if l := ix.layouts[i].Load(); l != nil {
		return l
	}
	n := ix.nodes[i]
	key := numaHash(n.NUMA)
	ix.mu.Lock()
	var l *nodeLayout
	for _, cand := range ix.shapes[key] {
		if api.SameNUMA(cand.numa, n.NUMA) {
			l = cand
			break
		}
	}
	if l == nil {
		l = newLayout(n)
		ix.shapes[key] = append(ix.shapes[key], l)
	}
	ix.mu.Unlock()
	ix.layouts[i].Store(l)
	return l
}

func numaHash(numa []api.NUMANode) uint64 {
	const prime = 1099511628211
	h := uint64(14695981039346656037)
	mix := func(v int64) { h = (h ^ uint64(v)) * prime }
	for _, nn := range numa {
		mix(int64(nn.ID))
		mix(nn.MemoryBytes)
		mix(int64(len(nn.CPUs)))
		for _, cpu := range nn.CPUs {
			mix(int64(cpu))
		}
	}
	return h
}
