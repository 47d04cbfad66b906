package bench

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/scheduler"
)

// State is a compact in-memory scheduler.State: nodes in a slice sorted by
// ID, allocations indexed per node (by slice position) and per workload.
// Apply commits a plan the way the server's plan applier does — every
// node's part is re-checked with scheduler.CheckNode against the current
// allocations first — and keeps Node.Allocated incrementally.
//
// Reads are safe for concurrent use; Apply and PutWorkload are not and must
// not run concurrently with a Schedule on the same State.
type State struct {
	nodes      []*api.Node
	nodeIdx    map[string]int32
	byNode     [][]*api.Allocation
	workloads  map[string]*api.Workload
	byWorkload map[string][]*api.Allocation
	byID       map[string]*api.Allocation
	index      uint64
	// nodeIndex serves every evaluation: nodes and their labels never
	// change here, only their allocations.
	nodeIndex *scheduler.NodeIndex
}

var (
	_ scheduler.State       = (*State)(nil)
	_ scheduler.NodeIndexer = (*State)(nil)
)

// NewState returns a State holding nodes (sorted by ID here). Their
// Allocated is reset: the state starts empty.
func NewState(nodes []*api.Node) *State {
	nodes = slices.Clone(nodes)
	slices.SortFunc(nodes, func(a, b *api.Node) int { return strings.Compare(a.ID, b.ID) })
	s := &State{
		nodes:      nodes,
		nodeIdx:    make(map[string]int32, len(nodes)),
		byNode:     make([][]*api.Allocation, len(nodes)),
		workloads:  make(map[string]*api.Workload),
		byWorkload: make(map[string][]*api.Allocation),
		byID:       make(map[string]*api.Allocation),
		index:      1,
	}
	for i, n := range nodes {
		n.Allocated = api.Resources{}
		s.nodeIdx[n.ID] = int32(i)
	}
	s.nodeIndex = scheduler.NewNodeIndex(s.nodes)
	return s
}

// NodeIndex returns the index of Nodes() the scheduler reads label values
// from.
func (s *State) NodeIndex() *scheduler.NodeIndex { return s.nodeIndex }

// Nodes returns every node sorted by ID.
func (s *State) Nodes() []*api.Node { return s.nodes }

// Node returns the node with id, or nil.
func (s *State) Node(id string) *api.Node {
	if i, ok := s.nodeIdx[id]; ok {
		return s.nodes[i]
	}
	return nil
}

// Workload returns the workload called name, or nil.
func (s *State) Workload(name string) *api.Workload { return s.workloads[name] }

// AllocsByWorkload returns the workload's allocations (any status).
func (s *State) AllocsByWorkload(name string) []*api.Allocation { return s.byWorkload[name] }

// AllocsByNode returns the node's allocations (any status).
func (s *State) AllocsByNode(id string) []*api.Allocation {
	if i, ok := s.nodeIdx[id]; ok {
		return s.byNode[i]
	}
	return nil
}

// Index is the state's raft-like index, bumped on every write.
func (s *State) Index() uint64 { return s.index }

// PutWorkload stores (or replaces) a workload.
func (s *State) PutWorkload(w *api.Workload) {
	s.index++
	w.ModifyIndex = s.index
	if w.CreateIndex == 0 {
		w.CreateIndex = s.index
	}
	s.workloads[w.Name] = w
}

// ApplyResult is what Apply committed of a plan.
type ApplyResult struct {
	Placed        int
	Stopped       int
	Rejected      []string // node ids whose part did not fit
	RejectReasons []string
	Preempted     []*api.Allocation // evicted allocations, as stopped
}

// Apply commits plan the way the server's plan applier does: each node's
// placements are re-checked with scheduler.CheckNode against the current
// allocations (minus the plan's stops there) and committed only when they
// fit; stops never overcommit anything and are all committed. A stopped
// allocation becomes desired-stop (lost when asked); a preempted or still
// pending one releases its resources at once (api.Allocation.Terminal).
// Node.Allocated is updated by the difference. Rejected parts are left out;
// the caller re-evaluates.
func (s *State) Apply(plan *api.Plan) ApplyResult {
	var res ApplyResult
	s.index++
	for _, id := range slices.Sorted(maps.Keys(plan.Place)) {
		place := plan.Place[id]
		var stopping map[string]bool
		if stops := plan.Stop[id]; len(stops) > 0 {
			stopping = make(map[string]bool, len(stops))
			for _, st := range stops {
				stopping[st.AllocID] = true
			}
		}
		ni, known := s.nodeIdx[id]
		var node *api.Node
		var existing []*api.Allocation
		if known {
			node, existing = s.nodes[ni], s.byNode[ni]
		}
		if ok, reason := scheduler.CheckNode(node, existing, stopping, place); !ok {
			res.Rejected = append(res.Rejected, id)
			res.RejectReasons = append(res.RejectReasons, id+": "+reason)
			continue
		}
		// This node's stops first, so the placements find the room they
		// were checked against.
		for _, st := range plan.Stop[id] {
			if s.stop(st, &res) {
				res.Stopped++
			}
		}
		for _, a := range place {
			s.put(ni, a)
			res.Placed++
		}
	}
	for _, id := range slices.Sorted(maps.Keys(plan.Stop)) {
		if _, done := plan.Place[id]; done && !slices.Contains(res.Rejected, id) {
			continue
		}
		for _, st := range plan.Stop[id] {
			if s.stop(st, &res) {
				res.Stopped++
			}
		}
	}
	return res
}

func (s *State) stop(st api.StopRequest, res *ApplyResult) bool {
	old := s.byID[st.AllocID]
	if old == nil || old.DesiredStatus == api.DesiredStop {
		return false
	}
	a := old.Copy()
	a.DesiredStatus, a.DesiredReason, a.PreemptedBy = api.DesiredStop, st.Reason, st.PreemptedBy
	if st.Lost {
		a.ClientStatus = api.AllocLost
	}
	a.ModifyIndex = s.index
	if ni, ok := s.nodeIdx[a.NodeID]; ok && !old.Terminal() && a.Terminal() {
		n := s.nodes[ni]
		n.Allocated = n.Allocated.Sub(old.Resources)
	}
	s.replace(old, a)
	if st.PreemptedBy != "" {
		res.Preempted = append(res.Preempted, a)
	}
	return true
}

func (s *State) replace(old, a *api.Allocation) {
	s.byID[a.ID] = a
	if ni, ok := s.nodeIdx[a.NodeID]; ok {
		if j := slices.Index(s.byNode[ni], old); j >= 0 {
			s.byNode[ni][j] = a
		}
	}
	if as := s.byWorkload[a.Workload]; as != nil {
		if j := slices.Index(as, old); j >= 0 {
			as[j] = a
		}
	}
}

// put stores a new allocation on node ni and charges it.
func (s *State) put(ni int32, a *api.Allocation) {
	a.CreateIndex, a.ModifyIndex = s.index, s.index
	s.byID[a.ID] = a
	s.byNode[ni] = append(s.byNode[ni], a)
	s.byWorkload[a.Workload] = append(s.byWorkload[a.Workload], a)
	if !a.Terminal() {
		n := s.nodes[ni]
		n.Allocated = n.Allocated.Add(a.Resources)
	}
}

// Allocations is the number of allocations stored, any status.
func (s *State) Allocations() int { return len(s.byID) }

// Verify re-derives every node's occupancy from its allocations,
// independently of the scheduler's code, and returns one line per problem:
// an aggregate dimension over capacity, Allocated out of step with the
// allocations, an exclusive core or whole GPU given twice, GPU shares over
// 1000 milli, a NUMA node's pinned memory over its size, or an allocation
// on a node that is not ready at placement. Empty means no overcommit.
func (s *State) Verify() []string {
	var out []string
	for ni, n := range s.nodes {
		var used api.Resources
		cores := map[int]bool{}
		whole := map[string]bool{}
		shares := map[string]int64{}
		numaMem := map[int]int64{}
		for _, a := range s.byNode[ni] {
			if a.Terminal() {
				continue
			}
			used = used.Add(a.Resources)
			for _, c := range a.Assignment.CPUs {
				if cores[c] {
					out = append(out, fmt.Sprintf("%s: core %d assigned twice", n.ID, c))
				}
				cores[c] = true
			}
			if len(a.Assignment.CPUs) > 0 {
				numaMem[a.Assignment.NUMANode] += a.Resources.MemoryBytes
			}
			if a.Assignment.GPUMilli > 0 {
				for _, g := range a.Assignment.GPUs {
					shares[g] += a.Assignment.GPUMilli
				}
			} else {
				for _, g := range a.Assignment.GPUs {
					if whole[g] {
						out = append(out, fmt.Sprintf("%s: gpu %s assigned twice", n.ID, g))
					}
					whole[g] = true
				}
			}
		}
		if dim := used.Exceeds(n.Capacity); dim != "" {
			out = append(out, fmt.Sprintf("%s: %s overcommitted: %+v > %+v", n.ID, dim, used, n.Capacity))
		}
		if used != n.Allocated {
			out = append(out, fmt.Sprintf("%s: Allocated %+v, allocations sum to %+v", n.ID, n.Allocated, used))
		}
		for g, m := range shares {
			if whole[g] || m > 1000 {
				out = append(out, fmt.Sprintf("%s: gpu %s shares %d milli (whole-assigned %v)", n.ID, g, m, whole[g]))
			}
		}
		for _, nu := range n.NUMA {
			if numaMem[nu.ID] > nu.MemoryBytes {
				out = append(out, fmt.Sprintf("%s: numa %d pinned memory %d > %d", n.ID, nu.ID, numaMem[nu.ID], nu.MemoryBytes))
			}
		}
	}
	return out
}
