package bench

import (
	"fmt"
	"slices"
	"strings"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/planapply"
	"github.com/strata-dev/strata/internal/scheduler"
)

// State is a compact in-memory scheduler.State: nodes in a slice sorted by
// ID, allocations indexed per node (by slice position) and per workload.
// Apply commits a plan through the server's plan-applier rules
// (internal/planapply) and keeps Node.Allocated incrementally.
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
	_ planapply.View        = (*State)(nil)
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

// Workload returns the workload called name, or nil. The bench's cell has
// one namespace, so ns is not read.
func (s *State) Workload(_, name string) *api.Workload { return s.workloads[name] }

// AllocsByWorkload returns the workload's allocations (any status).
func (s *State) AllocsByWorkload(_, name string) []*api.Allocation { return s.byWorkload[name] }

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

// Apply commits plan through the server's plan-applier rules
// (planapply.Decide): each node's placements are re-checked with
// scheduler.CheckNode against the current allocations (minus the plan's
// stops there), placement ids must be fresh, a plan with a gang member is
// all-or-nothing, and an eviction whose preemptor is not committed is
// left out. A stopped allocation becomes desired-stop (lost when asked); a
// preempted or still pending one releases its resources at once
// (api.Allocation.Terminal). Node.Allocated is updated by the difference.
// Rejected parts are left out; the caller re-evaluates.
func (s *State) Apply(plan *api.Plan) ApplyResult {
	d := planapply.Decide(s, plan)
	res := ApplyResult{Rejected: d.Rejected, RejectReasons: d.Reasons}
	s.index++
	// Stops first, so the placements find the room they were checked
	// against.
	for _, st := range d.Stop {
		if s.stop(st, &res) {
			res.Stopped++
		}
	}
	for _, id := range d.Committed {
		for _, a := range plan.Place[id] {
			s.put(s.nodeIdx[id], a)
			res.Placed++
		}
	}
	return res
}

// Alloc returns the allocation with id, any status, or nil
// (planapply.View).
func (s *State) Alloc(id string) *api.Allocation { return s.byID[id] }

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
