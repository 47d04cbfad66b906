package scheduler

import (
	"strconv"
	"strings"
)

// A caller that schedules one evaluation after another on a cell that
// changes a little between them (the simulator: one pod per evaluation,
// one node changed by each) pays for every node the walk examines in
// every evaluation: its state, its occupancy loaded from its allocations,
// every filter and every scorer. The benchmark, placing thousands of
// replicas of one group per evaluation, pays for them once per
// evaluation. Borg (Verma et al., EuroSys 2015, §3.4) caches a machine's
// feasibility and score for a task's equivalence class until the machine
// or the task changes; so does the engine, when the snapshot can say
// which nodes changed:
//
//   - NodeVersioner: the State gives every node a version that moves
//     whenever anything the engine reads of it changes (the node object,
//     the allocations on it).
//   - Equivalence classes: groups whose node-local filters (kindStatic,
//     kindCapacity) and scorers read the same of them judge every node
//     alike. Each filter names what it reads (filter.key), each scorer
//     that can (ScoreKeyer); the class key is their concatenation.
//   - The cache (scoreCache, kept in a Scratch across calls) holds, per
//     class and node, the version the node was judged at, the first
//     node-local filter that rejects it (and its reason), whether a
//     static filter rejects it, and the scorers' weighted sum.
//
// It never changes a plan: a cached verdict stands for a node only while
// the plan has not changed that node (cell.pristine) and the node's
// version is the one it was judged at; dynamic filters (quota, hard
// relation terms) and relation terms' scores are judged live every time,
// in their place in the chain. TestScoreCacheKeepsPlans replays random
// cells with and without the cache and requires the same plans.

// NodeVersioner is implemented by a State that can say, node by node, what
// changed between two of its snapshots. NodeVersions returns one version
// per node of Nodes(), in the same order, and source, what counts them
// (comparable; nil means the snapshot cannot say). A node's version must
// move whenever anything of the node object or of the allocations
// AllocsByNode returns for it changes; two snapshots of one source list
// the same nodes in the same order. The engine defines what it needs; the
// data layer only counts.
type NodeVersioner interface {
	NodeVersions() (source any, versions []uint64)
}

// ScoreKeyer is implemented by a Scorer whose score depends on the request
// only through what ScoreKey names (the node view aside): two requests
// with equal keys score every node view alike. The engine then keeps a
// node's score across evaluations until the node changes. ok false means
// this request's score cannot be kept; a scorer that does not implement it
// is asked every time.
type ScoreKeyer interface {
	ScoreKey(req *Request) (key string, ok bool)
}

// defaultCachedVerdicts bounds the cache's size, in node verdicts over
// all classes (24 bytes each), when the Scratch does not say: the least
// recently used class goes first.
const defaultCachedVerdicts = 1 << 20

// minCachedClasses is how many classes the cache keeps however large the
// cell.
const minCachedClasses = 8

// verdict is what one class's node-local stages said of one node as a
// snapshot had it.
type verdict struct {
	version uint64  // the node's version when judged, plus one; 0: not judged
	score   float64 // the scorers' weighted sum, when scored
	first   int16   // position in group.filters of the first node-local filter that rejects; -1: none
	reason  uint16  // that filter's reason (verdicts.reasons)
	// staticFail is set when some static filter rejects the node: no
	// eviction can make room there (preempt.go).
	staticFail bool
	scored     bool
}

// verdicts is one equivalence class's verdicts, one per node.
type verdicts struct {
	key     string
	used    uint64 // the cache's clock when last used
	scores  bool   // every scorer has a key: scores are kept too
	nodes   []verdict
	reasons []string
}

// reasonID returns the id of reason r, adding it when new. A class meets
// few distinct reasons.
func (vs *verdicts) reasonID(r string) uint16 {
	for k, x := range vs.reasons {
		if x == r {
			return uint16(k)
		}
	}
	vs.reasons = append(vs.reasons, r)
	return uint16(len(vs.reasons) - 1)
}

// scoreCache is the verdicts of the classes a Scratch's caller met, for
// the nodes of one version source, and per node the lowest priority of
// its live allocations. The zero value is empty.
type scoreCache struct {
	source  any
	size    int // nodes
	clock   uint64
	classes map[string]*verdicts
	// lowest is, per node, the lowest priority among its live
	// allocations (lowestAt: at which version plus one; 0: not known).
	lowest   []int
	lowestAt []uint64
	// details is, per node, its occupancy as the snapshot has it
	// (detailAt: at which version plus one), shared by every plan that
	// has not changed the node; never written once made.
	details  []*nodeDetail
	detailAt []uint64
	// states is, per node, its state as the snapshot has it (stateAt: at
	// which version plus one): a class judging a node another class has
	// judged at the same version does not read the node object again.
	states  []nodeState
	stateAt []uint64
	// budget bounds the verdicts kept (Scratch.CachedVerdicts).
	budget int
}

// bind readies the cache for a cell of versions from source, emptying it
// when the source or the cell's size changed. It returns false when the
// snapshot cannot say what changed.
func (sc *scoreCache) bind(source any, versions []uint64, budget int) bool {
	if source == nil {
		return false
	}
	if sc.source != source || sc.size != len(versions) {
		n := len(versions)
		*sc = scoreCache{source: source, size: n, classes: make(map[string]*verdicts),
			lowest: make([]int, n), lowestAt: make([]uint64, n), details: make([]*nodeDetail, n), detailAt: make([]uint64, n),
			states: make([]nodeState, n), stateAt: make([]uint64, n)}
	}
	sc.budget = budget
	if sc.budget <= 0 {
		sc.budget = defaultCachedVerdicts
	}
	sc.clock++
	return true
}

// class returns the verdicts of the class named key, making room for it
// by dropping the least recently used class when the cache is full.
func (sc *scoreCache) class(key string, scores bool) *verdicts {
	if vs, ok := sc.classes[key]; ok {
		vs.used = sc.clock
		return vs
	}
	var nodes []verdict
	if len(sc.classes) >= max(minCachedClasses, sc.budget/max(sc.size, 1)) {
		var oldest *verdicts
		for _, vs := range sc.classes {
			if oldest == nil || vs.used < oldest.used {
				oldest = vs
			}
		}
		delete(sc.classes, oldest.key)
		nodes = oldest.nodes
		clear(nodes)
	} else {
		nodes = make([]verdict, sc.size)
	}
	vs := &verdicts{key: key, used: sc.clock, scores: scores, nodes: nodes}
	sc.classes[key] = vs
	return vs
}

// nodeVersionsOf is st's node versions, looking through the IndexCache's
// binding; a nil source when st cannot say.
func nodeVersionsOf(st State) (any, []uint64) {
	if b, ok := st.(boundState); ok {
		st = b.State
	}
	if nv, ok := st.(NodeVersioner); ok {
		return nv.NodeVersions()
	}
	return nil, nil
}

// classKey names g's equivalence class: what its node-local filters read
// of it, where its dynamic filters stand, and its scorers' keys. scores
// is false when some scorer cannot name its key.
func (g *group) classKey() (key string, scores bool) {
	var sb strings.Builder
	for _, f := range g.filters {
		if f.kind() == kindDynamic {
			sb.WriteString("~")
			sb.WriteString(f.name())
		} else {
			sb.WriteString(f.key(g))
		}
		sb.WriteByte('\n')
	}
	scores = true
	for _, ws := range g.scorers {
		sk, ok := ws.Scorer.(ScoreKeyer)
		if !ok {
			scores = false
			break
		}
		k, ok := sk.ScoreKey(&g.req)
		if !ok {
			scores = false
			break
		}
		sb.WriteString(ws.Name)
		sb.WriteByte(' ')
		sb.WriteString(strconv.FormatFloat(ws.Weight, 'g', -1, 64))
		sb.WriteByte(' ')
		sb.WriteString(k)
		sb.WriteByte('\n')
	}
	if !scores {
		sb.WriteString("unscored")
	}
	return sb.String(), scores
}

// useCache binds g to its class in the cell's score cache, when the cell
// has one; after relate, once the filter chain is final.
func (g *group) useCache(c *cell) {
	if c.cache == nil {
		return
	}
	key, scores := g.classKey()
	g.verdicts = c.cache.class(key, scores)
	g.dynamicAt = g.dynamicAt[:0]
	for k, f := range g.filters {
		if p, ok := f.(everyNodePasser); ok && p.passesAll(g, c) {
			continue // nothing to judge live
		}
		if f.kind() == kindDynamic {
			g.dynamicAt = append(g.dynamicAt, k)
		}
	}
}

// everyNodePasser is implemented by a dynamic filter that can tell, once
// the cell is known, that it passes every node for the whole plan (the
// quota stage of a namespace without a quota): cached verdicts then need
// no live judgement from it.
type everyNodePasser interface {
	passesAll(g *group, c *cell) bool
}

// judged returns g's verdict on node i, judging the node when the cache
// has none for its version; nil when no verdict may stand for the node
// (no cache, or the plan changed the node).
func (g *group) judged(c *cell, i int) *verdict {
	vs := g.verdicts
	if vs == nil || !c.pristine(i) {
		return nil
	}
	v := &vs.nodes[i]
	if v.version != c.versions[i]+1 || v.version == 0 {
		g.judge(c, i, v)
	}
	return v
}

// judge runs g's node-local filters on node i: the first that rejects,
// and whether any static one does.
func (g *group) judge(c *cell, i int, v *verdict) {
	// The node is pristine: its state is the snapshot's, made here
	// without a place in the plan.
	n := c.pristineState(i)
	*v = verdict{version: c.versions[i] + 1, first: -1}
	for k, f := range g.filters {
		kind := f.kind()
		if kind == kindDynamic || (v.first >= 0 && kind != kindStatic) {
			continue
		}
		r := f.check(g, c, n, i)
		if r == "" {
			continue
		}
		if v.first < 0 {
			v.first, v.reason = int16(k), g.verdicts.reasonID(r)
		}
		if kind == kindStatic {
			v.staticFail = true
			return
		}
	}
}

// replay is firstReject from verdict v: the dynamic filters standing
// before the first node-local rejection are judged now, in their order.
func (g *group) replay(c *cell, i int, v *verdict) (int, string) {
	end := len(g.filters)
	if v.first >= 0 {
		end = int(v.first)
	}
	for _, k := range g.dynamicAt {
		if k >= end {
			break
		}
		// Dynamic filters read the cell, never the node's state (filter).
		if r := g.filters[k].check(g, c, nil, i); r != "" {
			return k, r
		}
	}
	if v.first >= 0 {
		return int(v.first), g.verdicts.reasons[v.reason]
	}
	return -1, ""
}

// dynamicReject reports whether one of g's dynamic filters rejects node i
// now.
func (g *group) dynamicReject(c *cell, i int) bool {
	for _, k := range g.dynamicAt {
		if g.filters[k].check(g, c, nil, i) != "" {
			return true
		}
	}
	return false
}

// lowestPriority is the lowest priority of node i's live allocations as
// the snapshot has them (math.MaxInt when none), kept per node version;
// ok is false without a cache.
func (c *cell) lowestPriority(i int) (prio int, ok bool) {
	sc := c.cache
	if sc == nil {
		return 0, false
	}
	if v := c.versions[i] + 1; v != 0 && sc.lowestAt[i] == v {
		return sc.lowest[i], true
	}
	lowest := int(^uint(0) >> 1)
	for _, a := range c.st.AllocsByNode(c.nodes[i].ID) {
		if !a.Terminal() {
			lowest = min(lowest, a.Priority)
		}
	}
	sc.lowest[i], sc.lowestAt[i] = lowest, c.versions[i]+1
	return lowest, true
}

// detail is node i's occupancy as the snapshot has it, made from its live
// allocations once per node version. The caller must not change it.
func (sc *scoreCache) detail(c *cell, i int) *nodeDetail {
	if v := c.versions[i] + 1; v != 0 && sc.detailAt[i] == v {
		return sc.details[i]
	}
	n := c.nodes[i]
	d := c.layout(i).detail(n)
	for _, a := range c.st.AllocsByNode(n.ID) {
		if !a.Terminal() {
			d.apply(a)
		}
	}
	sc.details[i], sc.detailAt[i] = d, c.versions[i]+1
	return d
}

// nothingBelow reports, from the score cache, whether no live allocation
// of the cell has a priority below prio: then no preemption can evict
// anything. False without a cache.
func (c *cell) nothingBelow(prio int) bool {
	if c.cache == nil {
		return false
	}
	for i := range c.nodes {
		if lowest, _ := c.lowestPriority(i); lowest < prio {
			return false
		}
	}
	return true
}

// state is node i's state as the snapshot has it, kept per node version.
func (sc *scoreCache) state(c *cell, i int) nodeState {
	if v := c.versions[i] + 1; v != 0 && sc.stateAt[i] == v {
		return sc.states[i]
	}
	ns := snapshotState(c.nodes[i])
	sc.states[i], sc.stateAt[i] = ns, c.versions[i]+1
	return ns
}

// pristineState is the state of node i, which the plan has not changed:
// the cell's when the plan made one, else the snapshot's from the cache,
// without a place in the plan (valid until the next call).
func (c *cell) pristineState(i int) *nodeState {
	if c.slot[i] != 0 {
		return c.at(i)
	}
	c.judging = c.cache.state(c, i)
	return &c.judging
}
