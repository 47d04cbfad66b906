package scheduler

// A group with dynamic terms (spread, rules about its own replicas) cannot
// keep its candidates in one heap of cached scores: the verdict and the
// score of its dynamic terms on a node move whenever another node gets a
// replica. Scanning every candidate for every replica (the scan (scanSelection)) costs
// O(K) per replica, 5,000 verdicts at 100k nodes.
//
// But a spread or self (anti-)affinity term judges a node only by the
// count of the group's replicas in the node's domain and by the tally's
// totals (the minimum over eligible domains, the total): nodes with the
// same counts are judged alike. classes therefore keeps the candidates in
// buckets of nodes alike for every dynamic term — by domain when the key
// has few domains (a zone), by the domain's count when it has many (a
// rack, a node) — and each bucket as a heap in selection order with the
// bucket's own dynamic score. Selecting a replica evaluates the dynamic
// terms once per bucket, on its root; a placement moves only the
// candidates of the domains whose count changed (read from the tallies'
// logs), a few per placement. The choice is the scan (scanSelection)'s, node for node:
// within a bucket the root is the best by score plus the bucket's dynamic
// score, then seeded rank, and the best of the roots is the best of all
// (TestPropertyClassesKeepPlans compares the two).

// maxClassDims bounds the dynamic terms classes handle; a group with more
// (or with other terms, such as peers about its own replicas) selects by a
// scan.
const maxClassDims = 4

// defaultCoarseDomains is the most domains a key may have for its term to
// bucket candidates by domain; beyond it, by the domain's count.
const defaultCoarseDomains = 16

type classKey [maxClassDims]int32

// classDim is one dynamic term's part of a bucket's key.
type classDim struct {
	tl     *tally
	coarse bool // the key is the domain; otherwise the domain's count
	// Fine dimensions only: each domain's candidates as a list through
	// classCand.next (head: 1 + pool id), and how much of the tally's log
	// has been read.
	head map[int32]int32
	seen int
}

type classCand struct {
	candidate
	bucket int32 // -1: no longer in the set
	pos    int32 // in the bucket's heap
	next   [maxClassDims]int32
}

// bucket is the candidates with one key. extra is the dynamic score the
// heap is ordered by; it is brought up to date when the bucket is judged.
type bucket struct {
	key   classKey
	extra float64
	heap  []int32 // pool ids
}

type classes struct {
	g       *group
	c       *cell
	dims    []classDim
	pool    []classCand
	alive   int
	buckets []*bucket
	byKey   map[classKey]int32
}

// classesHandle reports whether classes can hold g's candidates: every
// dynamic term judges a node by its domain's count (term.countTally), and
// there are at most maxClassDims of them.
func classesHandle(g *group) bool {
	if len(g.dynamic) == 0 || len(g.dynamic) > maxClassDims {
		return false
	}
	for _, t := range g.dynamic {
		if t.countTally() == nil {
			return false
		}
	}
	return true
}

// newClasses returns the classes of g's candidates, about size of them;
// classesHandle(g) must hold.
func newClasses(g *group, c *cell, coarseDomains, size int) *classes {
	if coarseDomains == 0 {
		coarseDomains = defaultCoarseDomains // negative: none is coarse
	}
	cl := &classes{g: g, c: c, byKey: make(map[classKey]int32), pool: make([]classCand, 0, size)}
	for _, t := range g.dynamic {
		tl := t.countTally()
		d := classDim{tl: tl, coarse: len(tl.ix.names) <= coarseDomains}
		if !d.coarse {
			d.head = make(map[int32]int32, min(size, len(tl.ix.names)))
			tl.logged = true
			d.seen = len(tl.log)
		}
		cl.dims = append(cl.dims, d)
	}
	return cl
}

// keyOf is node i's bucket key now.
func (cl *classes) keyOf(i int) classKey {
	var k classKey
	for n := range cl.dims {
		d := &cl.dims[n]
		if d.coarse {
			k[n] = d.tl.ix.of[i]
		} else {
			k[n] = d.tl.count(i)
		}
	}
	return k
}

func (cl *classes) push(cd candidate) {
	id := int32(len(cl.pool))
	cl.pool = append(cl.pool, classCand{candidate: cd, bucket: -1})
	p := &cl.pool[id]
	for n := range cl.dims {
		d := &cl.dims[n]
		if d.coarse {
			continue
		}
		if dom := d.tl.ix.of[cd.node]; dom >= 0 {
			p.next[n] = d.head[dom]
			d.head[dom] = id + 1
		}
	}
	cl.alive++
	cl.enter(id, cl.keyOf(int(cd.node)))
}

// enter puts candidate id into the bucket of key.
func (cl *classes) enter(id int32, key classKey) {
	b, ok := cl.byKey[key]
	if !ok {
		b = int32(len(cl.buckets))
		_, extra := cl.g.verdict(cl.c, int(cl.pool[id].node))
		cl.buckets = append(cl.buckets, &bucket{key: key, extra: extra})
		cl.byKey[key] = b
	}
	bk := cl.buckets[b]
	p := &cl.pool[id]
	p.bucket, p.pos = b, int32(len(bk.heap))
	bk.heap = append(bk.heap, id)
	heapUp(bucketOrder{cl, bk}, len(bk.heap)-1)
}

// leave takes candidate id out of its bucket.
func (cl *classes) leave(id int32) {
	p := &cl.pool[id]
	bk := cl.buckets[p.bucket]
	j, last := int(p.pos), len(bk.heap)-1
	if j != last {
		bucketOrder{cl, bk}.swap(j, last)
	}
	bk.heap = bk.heap[:last]
	if j < last {
		heapFix(bucketOrder{cl, bk}, j)
	}
	p.bucket = -1
}

// sync moves the candidates of every domain whose count changed since the
// last call to the bucket they belong to now.
func (cl *classes) sync() {
	for n := range cl.dims {
		d := &cl.dims[n]
		if d.coarse || d.seen == len(d.tl.log) {
			continue
		}
		for _, dom := range d.tl.log[d.seen:] {
			for id := d.head[dom] - 1; id >= 0; id = cl.pool[id].next[n] - 1 {
				p := &cl.pool[id]
				if p.bucket < 0 {
					continue
				}
				if key := cl.keyOf(int(p.node)); key != cl.buckets[p.bucket].key {
					cl.leave(id)
					cl.enter(id, key)
				}
			}
		}
		d.seen = len(d.tl.log)
	}
}

func (cl *classes) size() int       { return cl.alive }
func (cl *classes) node(id int) int { return int(cl.pool[id].node) }

// best returns the pool id of the candidate the scan would choose, or
// false when every candidate is refused by a dynamic term.
func (cl *classes) best() (int, bool) {
	cl.sync()
	found := false
	var best int32
	var bestTotal float64
	for _, bk := range cl.buckets {
		if len(bk.heap) == 0 {
			continue
		}
		reason, extra := cl.g.verdict(cl.c, int(cl.pool[bk.heap[0]].node))
		if reason != "" {
			continue
		}
		if extra != bk.extra {
			bk.extra = extra
			heapInit(bucketOrder{cl, bk})
		}
		id := bk.heap[0]
		p := &cl.pool[id]
		total := p.score + extra
		if !found || total > bestTotal || (total == bestTotal && p.rank < cl.pool[best].rank) {
			found, best, bestTotal = true, id, total
		}
	}
	return int(best), found
}

// update re-checks candidate id after a placement on it: re-scored if it
// still fits, dropped otherwise. Its bucket changes at the next sync.
func (cl *classes) update(j int) {
	id := int32(j)
	p := &cl.pool[id]
	i := int(p.node)
	if cl.g.check(cl.c, i) == "" {
		p.score = cl.g.score(cl.c, i)
		heapFix(bucketOrder{cl, cl.buckets[p.bucket]}, int(p.pos))
		return
	}
	cl.leave(id)
	cl.alive--
}

// bucketOrder is one bucket's heap in selection order: score plus the
// bucket's dynamic score, computed as the scan (scanSelection) computes
// it, then seeded rank. Swaps keep the candidates' positions.
type bucketOrder struct {
	cl *classes
	bk *bucket
}

func (o bucketOrder) len() int { return len(o.bk.heap) }

func (o bucketOrder) less(a, b int) bool {
	pa, pb := &o.cl.pool[o.bk.heap[a]], &o.cl.pool[o.bk.heap[b]]
	ta, tb := pa.score+o.bk.extra, pb.score+o.bk.extra
	return ta > tb || (ta == tb && pa.rank < pb.rank)
}

func (o bucketOrder) swap(i, j int) {
	h := o.bk.heap
	h[i], h[j] = h[j], h[i]
	o.cl.pool[h[i]].pos, o.cl.pool[h[j]].pos = int32(i), int32(j)
}
