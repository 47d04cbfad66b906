package freeindex

import (
	"math"
	"slices"

	"github.com/strata-dev/strata/internal/sim/cluster"
)

// entry is one indexed node: its key (free CPU, then node) and what the
// queries filter on.
type entry struct {
	cpu  int64 // free milli-CPU
	mem  int64 // free MiB
	node int32
	rank int32
}

func keyCmp(a, b entry) int {
	switch {
	case a.cpu < b.cpu:
		return -1
	case a.cpu > b.cpu:
		return 1
	case a.node < b.node:
		return -1
	case a.node > b.node:
		return 1
	}
	return 0
}

func rankCmp(a, b entry) int {
	switch {
	case a.rank < b.rank:
		return -1
	case a.rank > b.rank:
		return 1
	}
	return 0
}

// block holds a run of entries consecutive in key order.
type block struct {
	byKey  []entry // sorted by (cpu, node)
	byRank []entry // the same entries, sorted by rank
	maxMem int64
}

func (b *block) first() entry { return b.byKey[0] }
func (b *block) last() entry  { return b.byKey[len(b.byKey)-1] }

func (b *block) refreshMaxMem() {
	b.maxMem = math.MinInt64
	for _, e := range b.byKey {
		b.maxMem = max(b.maxMem, e.mem)
	}
}

// Index is the free-CPU index of one cluster's up nodes. It is not safe for
// concurrent use.
type Index struct {
	rank   []int32 // per node, fixed
	blocks []*block
	in     []bool  // per node: indexed (up)
	at     []entry // per node: its entry while indexed
	up     fenwick // indexed nodes by node index
	width  int     // target block size
	cursor uint64  // of the cluster's change log
	built  bool
	// widthOverride, when > 0, is the block size (tests use tiny blocks
	// to exercise splits and merges).
	widthOverride int
}

// New returns an index whose ties go to the lowest rank; rank[i] is node
// i's rank and every rank must be distinct. The index is filled on the
// first Sync.
func New(rank []int32) *Index {
	return &Index{rank: rank}
}

// Sync brings the index up to date with c: it applies the nodes c's change
// log names since the last Sync (all nodes on the first call, or when the
// log no longer reaches back).
func (ix *Index) Sync(c *cluster.Cluster) {
	if !ix.built || len(ix.in) != c.NumNodes() {
		ix.rebuild(c)
		return
	}
	changed, next, complete := c.Changes(ix.cursor)
	if !complete {
		ix.rebuild(c)
		return
	}
	for _, i := range changed {
		ix.refresh(c, int(i))
	}
	ix.cursor = next
}

func (ix *Index) rebuild(c *cluster.Cluster) {
	n := c.NumNodes()
	ix.in, ix.at = make([]bool, n), make([]entry, n)
	ix.up = newFenwick(n)
	ix.width = min(max(int(math.Sqrt(float64(n))), 32), 512)
	if ix.widthOverride > 0 {
		ix.width = ix.widthOverride
	}
	var all []entry
	for i := 0; i < n; i++ {
		if ns := c.Node(i); ns.Up {
			e := entry{cpu: ns.CPUFree, mem: ns.MemFree, node: int32(i), rank: ix.rank[i]}
			all = append(all, e)
			ix.in[i], ix.at[i] = true, e
			ix.up.add(i, 1)
		}
	}
	slices.SortFunc(all, keyCmp)
	ix.blocks = ix.blocks[:0]
	for lo := 0; lo < len(all); lo += ix.width {
		ix.blocks = append(ix.blocks, newBlock(slices.Clone(all[lo:min(lo+ix.width, len(all))])))
	}
	ix.cursor, ix.built = c.ChangeCursor(), true
}

func newBlock(byKey []entry) *block {
	b := &block{byKey: byKey, byRank: slices.Clone(byKey)}
	slices.SortFunc(b.byRank, rankCmp)
	b.refreshMaxMem()
	return b
}

// refresh re-indexes node i from the cluster.
func (ix *Index) refresh(c *cluster.Cluster, i int) {
	ns := c.Node(i)
	want := entry{cpu: ns.CPUFree, mem: ns.MemFree, node: int32(i), rank: ix.rank[i]}
	switch {
	case ix.in[i] && ns.Up && ix.at[i] == want:
	case ix.in[i]:
		ix.remove(ix.at[i])
		ix.in[i] = false
		ix.up.add(i, -1)
		if ns.Up {
			ix.insert(want)
		}
	case ns.Up:
		ix.insert(want)
	}
}

func (ix *Index) insert(e entry) {
	i := int(e.node)
	ix.in[i], ix.at[i] = true, e
	ix.up.add(i, 1)
	if len(ix.blocks) == 0 {
		ix.blocks = append(ix.blocks, newBlock([]entry{e}))
		return
	}
	// The first block whose last key is not below e, else the last block.
	k, _ := slices.BinarySearchFunc(ix.blocks, e, func(b *block, e entry) int { return keyCmp(b.last(), e) })
	k = min(k, len(ix.blocks)-1)
	b := ix.blocks[k]
	at, _ := slices.BinarySearchFunc(b.byKey, e, keyCmp)
	b.byKey = slices.Insert(b.byKey, at, e)
	at, _ = slices.BinarySearchFunc(b.byRank, e, rankCmp)
	b.byRank = slices.Insert(b.byRank, at, e)
	b.maxMem = max(b.maxMem, e.mem)
	if len(b.byKey) > 2*ix.width {
		ix.split(k)
	}
}

// split halves block k, keeping both halves' rank order.
func (ix *Index) split(k int) {
	b := ix.blocks[k]
	half := len(b.byKey) / 2
	left, right := &block{byKey: slices.Clone(b.byKey[:half])}, &block{byKey: slices.Clone(b.byKey[half:])}
	pivot := left.last()
	for _, e := range b.byRank {
		if keyCmp(e, pivot) <= 0 {
			left.byRank = append(left.byRank, e)
		} else {
			right.byRank = append(right.byRank, e)
		}
	}
	left.refreshMaxMem()
	right.refreshMaxMem()
	ix.blocks = slices.Replace(ix.blocks, k, k+1, left, right)
}

// remove takes e (indexed as it is) out of its block.
func (ix *Index) remove(e entry) {
	k, _ := slices.BinarySearchFunc(ix.blocks, e, func(b *block, e entry) int { return keyCmp(b.last(), e) })
	b := ix.blocks[k]
	at, _ := slices.BinarySearchFunc(b.byKey, e, keyCmp)
	b.byKey = slices.Delete(b.byKey, at, at+1)
	at, _ = slices.BinarySearchFunc(b.byRank, e, rankCmp)
	b.byRank = slices.Delete(b.byRank, at, at+1)
	switch {
	case len(b.byKey) == 0:
		ix.blocks = slices.Delete(ix.blocks, k, k+1)
	case len(b.byKey) < ix.width/4 && len(ix.blocks) > 1:
		ix.merge(k)
	case e.mem == b.maxMem:
		b.refreshMaxMem()
	}
}

// merge joins small block k with a neighbour (splitting the result again
// when it is too big).
func (ix *Index) merge(k int) {
	if k == len(ix.blocks)-1 || (k > 0 && len(ix.blocks[k-1].byKey) < len(ix.blocks[k+1].byKey)) {
		k--
	}
	a, b := ix.blocks[k], ix.blocks[k+1]
	m := newBlock(append(slices.Clone(a.byKey), b.byKey...))
	ix.blocks = slices.Replace(ix.blocks, k, k+2, m)
	if len(m.byKey) > 2*ix.width {
		ix.split(k)
	}
}

// Up is the number of indexed (up) nodes.
func (ix *Index) Up() int { return ix.up.total() }

// UpNode is the k-th indexed node in node order, 0 ≤ k < Up().
func (ix *Index) UpNode(k int) int { return ix.up.find(k) }

// MaxCPU is the most free CPU of any indexed node (ok=false when none is).
func (ix *Index) MaxCPU() (int64, bool) {
	if len(ix.blocks) == 0 {
		return 0, false
	}
	return ix.blocks[len(ix.blocks)-1].last().cpu, true
}

// firstBlock is the first block that may hold a node with at least cpu free.
func (ix *Index) firstBlock(cpu int64) int {
	k, _ := slices.BinarySearchFunc(ix.blocks, cpu, func(b *block, cpu int64) int {
		if b.last().cpu < cpu {
			return -1
		}
		return 1
	})
	return k
}

// Skip, when not nil, rejects nodes a query would otherwise return (a
// constraint the index does not know); it must not change the index.
type Skip func(node int) bool

// MinCPU is the least free CPU among the nodes with at least cpu milli-CPU
// and mem MiB free that skip accepts (ok=false when there is none).
func (ix *Index) MinCPU(cpu, mem int64, skip Skip) (int64, bool) {
	for k := ix.firstBlock(cpu); k < len(ix.blocks); k++ {
		b := ix.blocks[k]
		if b.maxMem < mem {
			continue
		}
		from, _ := slices.BinarySearchFunc(b.byKey, cpu, func(e entry, cpu int64) int {
			if e.cpu < cpu {
				return -1
			}
			return 1
		})
		for _, e := range b.byKey[from:] {
			if e.mem >= mem && (skip == nil || !skip(int(e.node))) {
				return e.cpu, true
			}
		}
	}
	return 0, false
}

// FirstByRank is the lowest-ranked node with between cpuLo and cpuHi
// milli-CPU free (both included), at least mem MiB free, that skip
// accepts (ok=false when there is none).
func (ix *Index) FirstByRank(cpuLo, cpuHi, mem int64, skip Skip) (int, bool) {
	best, bestRank := -1, int32(math.MaxInt32)
	for k := ix.firstBlock(cpuLo); k < len(ix.blocks); k++ {
		b := ix.blocks[k]
		if b.first().cpu > cpuHi {
			break
		}
		if b.maxMem < mem || b.byRank[0].rank >= bestRank {
			continue
		}
		for _, e := range b.byRank {
			if e.rank >= bestRank {
				break
			}
			if e.cpu >= cpuLo && e.cpu <= cpuHi && e.mem >= mem && (skip == nil || !skip(int(e.node))) {
				best, bestRank = int(e.node), e.rank
				break
			}
		}
	}
	return best, best >= 0
}

// Each calls fn for every node with at least cpu milli-CPU and mem MiB
// free that skip accepts, in no particular order.
func (ix *Index) Each(cpu, mem int64, skip Skip, fn func(node int)) {
	for k := ix.firstBlock(cpu); k < len(ix.blocks); k++ {
		b := ix.blocks[k]
		if b.maxMem < mem {
			continue
		}
		for _, e := range b.byKey {
			if e.cpu >= cpu && e.mem >= mem && (skip == nil || !skip(int(e.node))) {
				fn(int(e.node))
			}
		}
	}
}
