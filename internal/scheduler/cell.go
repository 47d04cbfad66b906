package scheduler

import (
	"math/rand/v2"
	"sort"

	"github.com/strata-dev/strata/api"
)

// orderStream separates the node-order random stream from the id stream.
const orderStream = 0x5eed0f0de7

// nodeState is the plan's running view of one node: what is free after this
// plan's stops and placements so far. The aggregate is kept incrementally;
// the hardware detail (cores, GPUs) is loaded only for nodes a group that
// needs it actually examines.
type nodeState struct {
	node   *api.Node
	free   api.Resources // Capacity - Allocated + stopped - placed
	placed []*api.Allocation
	detail *nodeDetail // nil until loaded
	// ready is node.Ready(), taken once when the cell is built (a node's
	// status does not change during a plan), so that filters walking the
	// cell do not touch the cold *api.Node for it.
	ready bool
}

// cell is the mutable scratch state of one Schedule call. It lives only for
// that call; nothing here is shared between calls.
type cell struct {
	st       State
	nodes    []nodeState // in State.Nodes order (sorted by ID)
	order    []int32     // seeded visiting order, indices into nodes
	stopping map[string]bool
	stops    map[string][]api.StopRequest
	// journal, while non-nil, records every placement and eviction so that
	// a gang trial can be rolled back (see trial.go).
	journal *[]change
	// domainCache holds the gang topology domains per label key.
	domainCache map[string]*domainSplit
	// hardViews holds, per static filter signature, the nodes that pass
	// a group's static filters (room.go).
	hardViews map[string]*hardView
	// room is scratch for gang room bounds, per node (room.go).
	room []int32
}

func newCell(st State, seed int64) *cell {
	nodes := st.Nodes()
	c := &cell{
		st:       st,
		nodes:    make([]nodeState, len(nodes)),
		order:    make([]int32, len(nodes)),
		stopping: make(map[string]bool),
		stops:    make(map[string][]api.StopRequest),
	}
	for i, n := range nodes {
		c.nodes[i] = nodeState{node: n, free: n.Capacity.Sub(n.Allocated), ready: n.Ready()}
		c.order[i] = int32(i)
	}
	rng := rand.New(rand.NewPCG(uint64(seed), orderStream))
	rng.Shuffle(len(c.order), func(i, j int) { c.order[i], c.order[j] = c.order[j], c.order[i] })
	return c
}

// find returns the index of node id, or -1. It relies on State.Nodes being
// sorted by ID; a node it cannot find simply gets no credit for stops.
func (c *cell) find(id string) int {
	i := sort.Search(len(c.nodes), func(i int) bool { return c.nodes[i].node.ID >= id })
	if i < len(c.nodes) && c.nodes[i].node.ID == id {
		return i
	}
	return -1
}

// stop records a stop in the plan and returns the allocation's resources to
// its node. Stops are all recorded before any placement, so no detail is
// loaded yet and detail loading skips stopped allocations.
func (c *cell) stop(s stopIntent) {
	a := s.alloc
	c.stops[a.NodeID] = append(c.stops[a.NodeID], api.StopRequest{AllocID: a.ID, Reason: s.reason, Lost: s.lost})
	c.stopping[a.ID] = true
	if i := c.find(a.NodeID); i >= 0 && !a.Terminal() {
		c.nodes[i].free = c.nodes[i].free.Add(a.Resources)
	}
}

// place charges a new allocation to node i.
func (c *cell) place(i int, a *api.Allocation) {
	n := &c.nodes[i]
	n.free = n.free.Sub(a.Resources)
	n.placed = append(n.placed, a)
	if n.detail != nil {
		n.detail.apply(a)
	}
	if c.journal != nil {
		*c.journal = append(*c.journal, change{node: i, alloc: a})
	}
}

// evict stops live allocations of node i for a preemption: they are
// recorded in the plan with the preemptor's id and their resources, cores
// and GPUs go back to the node at once. The node's detail is dropped and
// reloaded on next use, since it may already count the victims.
func (c *cell) evict(i int, victims []*api.Allocation, reason, by string) {
	n := &c.nodes[i]
	for _, v := range victims {
		c.stops[n.node.ID] = append(c.stops[n.node.ID], api.StopRequest{AllocID: v.ID, Reason: reason, PreemptedBy: by})
		c.stopping[v.ID] = true
		n.free = n.free.Add(v.Resources)
		if c.journal != nil {
			*c.journal = append(*c.journal, change{node: i, alloc: v, evicted: true})
		}
	}
	n.detail = nil
}

// detail returns node i's core and GPU occupancy, loading it on first use
// from the node's live allocations (minus this plan's stops, plus its
// placements so far).
func (c *cell) detail(i int) *nodeDetail {
	n := &c.nodes[i]
	if n.detail == nil {
		d := newNodeDetail(n.node)
		for _, a := range c.st.AllocsByNode(n.node.ID) {
			if !a.Terminal() && !c.stopping[a.ID] {
				d.apply(a)
			}
		}
		for _, a := range n.placed {
			d.apply(a)
		}
		n.detail = d
	}
	return n.detail
}

// placements returns the plan's Place map, nil when nothing was placed.
func (c *cell) placements() map[string][]*api.Allocation {
	var out map[string][]*api.Allocation
	for i := range c.nodes {
		if n := &c.nodes[i]; len(n.placed) > 0 {
			if out == nil {
				out = make(map[string][]*api.Allocation)
			}
			out[n.node.ID] = n.placed
		}
	}
	return out
}
