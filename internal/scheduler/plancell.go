package scheduler

import (
	"math/bits"
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
	// ready is node.Alive() and unschedulable node.Unschedulable(), taken
	// once when the state is made (a node's status does not change during
	// a plan), so that filters walking the cell do not touch the cold
	// *api.Node for them.
	ready         bool
	unschedulable string
	// changed is set once the plan stopped, placed or evicted anything
	// here: the node is no longer the snapshot's, so verdicts and scores
	// kept across plans (scorecache.go) do not describe it.
	changed bool
	// sharedDetail is set when detail is the score cache's copy of the
	// snapshot's occupancy, shared with later plans: it is copied before
	// the plan changes it.
	sharedDetail bool
}

// cell is the mutable scratch state of one Schedule call. It lives only for
// that call; nothing here is shared between calls.
//
// Node states are made on first use (at): a plan usually looks at a small
// part of a large cell (the feasible sample is 5% of it), and reading every
// node's capacity and allocation for each evaluation was the largest cost
// of a plan at 100k nodes, and most of its garbage. Code that reads a
// node's labels or fingerprint only should use node(i), which makes
// nothing.
type cell struct {
	st        State
	nodes     []*api.Node // State.Nodes(), sorted by ID; not to be modified
	nodeIndex *NodeIndex  // the State's index of nodes, or nil
	slot      []int32     // node index → 1 + position of its state in states; 0: none yet
	states    [][]nodeState
	used      int           // states made
	spare     [][]nodeState // zeroed chunks to use before allocating
	// scratch lent slot, order and chunks; nil when they are the cell's
	scratch *Scratch
	order   []int32 // seeded visiting order, indices into nodes
	// touched lists the nodes with a state, in the order they were made.
	touched  []int32
	stopping map[string]bool
	stops    map[string][]api.StopRequest
	// journal, while non-nil, records every placement and eviction so that
	// a gang trial can be rolled back (see trial.go).
	journal *[]change
	// changes lists the nodes whose free resources or stops changed, in
	// order, with repeats: placements, evictions and their rollbacks.
	changes []int32
	// rel is what the relation terms keep (tallies.go): told of every
	// placement and rollback.
	rel relationBook
	// budgets bounds what preemption takes of each victim's group
	// (preemptbudget.go), across the plan.
	budgets budgets
	// cache, when the snapshot says what changed (NodeVersioner) and the
	// call has a Scratch, keeps verdicts and scores across plans
	// (scorecache.go); versions are the snapshot's node versions.
	cache    *scoreCache
	versions []uint64
	// lent are the scratch's candidate lists the plan's windows hold.
	lent [][]candidate
	// judging is the state of a pristine node the score cache judges
	// without making it a place in the plan (scorecache.go).
	judging nodeState
}

// stateChunk is how many node states are allocated at once; states never
// move once made, so *nodeState stays valid for the whole plan.
const stateChunk = 256

func newCell(st State, seed int64) *cell { return newCellWith(st, seed, nil) }

// newCellWith makes a cell in scr's memory when scr is free (then the cell
// must be released), in memory of its own otherwise.
func newCellWith(st State, seed int64, scr *Scratch) *cell {
	nodes := st.Nodes()
	c := &cell{
		st:        st,
		nodes:     nodes,
		nodeIndex: indexFor(st, nodes),
		stopping:  make(map[string]bool),
		stops:     make(map[string][]api.StopRequest),
	}
	c.budgets = budgets{st: st, stopping: c.stopping}
	if !scr.take(c, len(nodes)) {
		c.slot = make([]int32, len(nodes))
		c.order = make([]int32, len(nodes))
	} else if source, versions := nodeVersionsOf(st); len(versions) == len(nodes) && scr.cache.bind(source, versions, scr.CachedVerdicts) {
		c.cache, c.versions = &scr.cache, versions
	}
	seededOrder(c.order, seed)
	return c
}

// seededOrder fills order with a permutation of 0..len(order)-1 drawn
// from seed: the very permutation math/rand/v2's Shuffle draws from
// rand.New(rand.NewPCG(seed, orderStream)), without its call through an
// interface and a closure per node (TestSeededOrderIsShuffle).
func seededOrder(order []int32, seed int64) {
	for i := range order {
		order[i] = int32(i)
	}
	pcg := rand.NewPCG(uint64(seed), orderStream)
	for i := len(order) - 1; i > 0; i-- {
		j := boundedDraw(pcg, uint64(i+1))
		order[i], order[j] = order[j], order[i]
	}
}

// boundedDraw is math/rand/v2's Rand.Uint64N(n) on src (Lemire's
// multiply-and-reject), for n > 0.
func boundedDraw(src *rand.PCG, n uint64) uint64 {
	if n&(n-1) == 0 { // a power of two: mask
		return src.Uint64() & (n - 1)
	}
	hi, lo := bits.Mul64(src.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(src.Uint64(), n)
		}
	}
	return hi
}

// size is the number of nodes in the cell.
func (c *cell) size() int { return len(c.nodes) }

// node returns node i's object: labels, fingerprint, capacity. It makes no
// state.
func (c *cell) node(i int) *api.Node { return c.nodes[i] }

// at returns node i's state in this plan, making it on first use.
func (c *cell) at(i int) *nodeState {
	if k := c.slot[i]; k != 0 {
		k--
		return &c.states[k/stateChunk][k%stateChunk]
	}
	if c.used%stateChunk == 0 {
		if k := len(c.spare); k > 0 {
			c.states = append(c.states, c.spare[k-1])
			c.spare = c.spare[:k-1]
		} else {
			c.states = append(c.states, make([]nodeState, stateChunk))
		}
	}
	k := c.used
	c.used++
	c.slot[i] = int32(k + 1)
	c.touched = append(c.touched, int32(i))
	ns := &c.states[k/stateChunk][k%stateChunk]
	*ns = snapshotState(c.nodes[i])
	return ns
}

// snapshotState is node n's state as the snapshot has it, before the plan
// changes anything.
func snapshotState(n *api.Node) nodeState {
	return nodeState{node: n, free: n.Capacity.Sub(n.Allocated), ready: n.Alive(), unschedulable: n.Unschedulable()}
}

// touch returns node i's state for a change of the plan (a stop, a
// placement, an eviction or the rollback of one), recorded in c.changes.
func (c *cell) touch(i int) *nodeState {
	n := c.at(i)
	n.changed = true
	c.changes = append(c.changes, int32(i))
	return n
}

// pristine reports whether node i is still as the snapshot has it: the
// plan has not changed it (it may not have a state yet).
func (c *cell) pristine(i int) bool {
	if len(c.changes) == 0 {
		return true // the plan changed nothing yet
	}
	k := c.slot[i]
	if k == 0 {
		return true
	}
	k--
	return !c.states[k/stateChunk][k%stateChunk].changed
}

// find returns the index of node id, or -1. It relies on State.Nodes being
// sorted by ID; a node it cannot find simply gets no credit for stops.
func (c *cell) find(id string) int {
	i := sort.Search(len(c.nodes), func(i int) bool { return c.nodes[i].ID >= id })
	if i < len(c.nodes) && c.nodes[i].ID == id {
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
		n := c.touch(i)
		n.free = n.free.Add(a.Resources)
	}
}

// place charges a new allocation to node i.
func (c *cell) place(i int, a *api.Allocation) {
	n := c.touch(i)
	n.free = n.free.Sub(a.Resources)
	n.placed = append(n.placed, a)
	if n.detail != nil {
		if n.sharedDetail {
			n.detail, n.sharedDetail = n.detail.clone(), false
		}
		n.detail.apply(a)
	}
	c.rel.placed(i, a)
	if c.journal != nil {
		*c.journal = append(*c.journal, change{node: i, alloc: a})
	}
}

// evict stops live allocations of node i for a preemption: they are
// recorded in the plan with the preemptor's id and their resources, cores
// and GPUs go back to the node at once. The node's detail is dropped and
// reloaded on next use, since it may already count the victims.
func (c *cell) evict(i int, victims []*api.Allocation, reason, by string) {
	n := c.touch(i)
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
func (c *cell) detail(i int) *nodeDetail { return c.detailOf(c.at(i), i) }

// detailOf is detail for node i in state n (c.at(i) or a copy of it).
func (c *cell) detailOf(n *nodeState, i int) *nodeDetail {
	if n.detail == nil && !n.changed && c.cache != nil {
		n.detail, n.sharedDetail = c.cache.detail(c, i), true
	}
	if n.detail == nil {
		d := c.layout(i).detail(n.node)
		for _, a := range c.st.AllocsByNode(n.node.ID) {
			switch {
			case a.Terminal():
			case c.stopping[a.ID]:
				d.linger(a)
			default:
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

// layout returns node i's core layout: the index's shared one, or a new
// one.
func (c *cell) layout(i int) *nodeLayout {
	if c.nodeIndex != nil {
		return c.nodeIndex.layout(i)
	}
	return newLayout(c.node(i))
}

// placements returns the plan's Place map, nil when nothing was placed.
func (c *cell) placements() map[string][]*api.Allocation {
	var out map[string][]*api.Allocation
	for _, i := range c.touched {
		if n := c.at(int(i)); len(n.placed) > 0 {
			if out == nil {
				out = make(map[string][]*api.Allocation)
			}
			out[n.node.ID] = n.placed
		}
	}
	return out
}
