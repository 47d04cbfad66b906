package scheduler

import (
	"fmt"
	"strconv"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/topology"
)

// term is a placement rule that relates a node to topology domains, to
// other allocations or to data: spread, affinity, anti-affinity, peers
// (communicatesWith) and data locality. A hard term rejects nodes; a soft
// one adds its weighted score. A dynamic term depends on where this plan
// puts the workload's own replicas, so its verdict on a node can change
// after a placement on another node; the feasible set evaluates dynamic
// terms when it selects (feasible.go, selection.go) instead of caching them. Static hard
// terms run as ordinary filters.
type term interface {
	// label names the rule in explanations: "spread rack", "affinity rack cache".
	label() string
	// reject returns why node i is refused now, "" when it passes; a soft
	// term never refuses.
	reject(c *cell, i int) string
	// score is the term's weighted contribution for node i (0 for hard terms).
	score(c *cell, i int) float64
	// required reports a hard term.
	required() bool
	// dynamic reports a term whose verdict moves with the plan's own
	// placements (a rule about the workload being placed).
	dynamic() bool
	// countTally is the tally the term judges a node by when its verdict
	// and score depend only on the count in the node's domain and the
	// tally's totals (spread, affinity: what classes bucket by); nil
	// otherwise.
	countTally() *tally
}

// weightOf turns a rule's 1..100 weight into score units: weight 100 counts
// as much as the whole range of a policy scorer.
func weightOf(w int) float64 { return float64(max(w, 1)) / 100 }

// relate compiles the group's relation rules against the cell: static hard
// terms become filters (before the capacity filters, since no eviction
// lifts them), the rest are kept for scoring and selection.
func (g *group) relate(c *cell, w *api.Workload) {
	pl := &g.tg.Placement
	own := target{namespace: api.NamespaceOf(w.Namespace), workload: w.Name, group: g.tg.Name}
	var terms []term
	for _, r := range pl.Spread {
		terms = append(terms, newSpreadTerm(c, g, r, own))
	}
	for _, r := range pl.Affinity {
		terms = append(terms, newAffinityTerm(c, g, w, r, false))
	}
	for _, r := range pl.AntiAffinity {
		terms = append(terms, newAffinityTerm(c, g, w, r, true))
	}
	for _, r := range pl.CommunicatesWith {
		terms = append(terms, newPeerTerm(c, w, own, r))
	}
	for _, r := range pl.DataLocality {
		terms = append(terms, newDataTerm(c, r))
	}
	var filters []filter
	for _, t := range terms {
		switch {
		case t.dynamic():
			g.dynamic = append(g.dynamic, t)
		case t.required():
			filters = append(filters, termFilter{t})
		default:
			g.static = append(g.static, t)
		}
	}
	if len(filters) > 0 {
		k := 0
		for k < len(g.filters) && g.filters[k].kind() != kindCapacity {
			k++
		}
		g.filters = append(g.filters[:k], append(filters, g.filters[k:]...)...)
	}
	for _, r := range pl.Affinity {
		if r.Workload != "" && r.Workload != w.Name {
			// Never evict what the group wants to be near.
			g.keep = append(g.keep, target{namespace: api.NamespaceOf(w.Namespace), workload: r.Workload, group: r.Group})
		}
	}
}

// termFilter runs a static hard term as a filter. Its verdict reads other
// workloads' allocations, which the plan's evictions may change, so it is
// of kindDynamic: no gang view prunes by it, and preemption does not try
// to lift it.
type termFilter struct{ t term }

func (f termFilter) name() string      { return f.t.label() }
func (termFilter) kind() stageKind     { return kindDynamic }
func (f termFilter) key(*group) string { return "term " + f.t.label() }

func (f termFilter) check(_ *group, c *cell, _ *nodeState, i int) string { return f.t.reject(c, i) }

// spreadTerm keeps the group's replicas within MaxSkew of the least-loaded
// eligible domain of a key (Kubernetes' topologySpreadConstraints): placing
// on node i is allowed when count(domain(i)) + 1 - min <= maxSkew. Eligible
// domains are those with a ready node that passes the group's required
// labels; a hard rule refuses nodes without the key.
type spreadTerm struct {
	key          string
	maxSkew      int32
	hard         bool
	weight       float64
	tl           *tally
	why, nolabel string
}

func newSpreadTerm(c *cell, g *group, r api.SpreadRule, own target) *spreadTerm {
	ix := c.index(r.Key)
	t := &spreadTerm{
		key: r.Key, maxSkew: int32(r.MaxSkew), hard: r.Mode != api.ModeSoft, weight: weightOf(r.Weight),
		tl:      c.newTally(ix, own, true),
		why:     fmt.Sprintf("spread over %s: maxSkew %d reached", r.Key, r.MaxSkew),
		nolabel: "no label " + r.Key + " (spread)",
	}
	// A domain is eligible as soon as one of its nodes is.
	eligible := make([]bool, len(ix.names))
	for d := range eligible {
		for _, i := range ix.members(d) {
			if c.node(int(i)).Ready() && (requireFilter{}).check(g, c, nil, int(i)) == "" {
				eligible[d] = true
				break
			}
		}
	}
	t.tl.trackMin(eligible)
	return t
}

func (t *spreadTerm) label() string      { return "spread " + t.key }
func (t *spreadTerm) countTally() *tally { return t.tl }
func (t *spreadTerm) required() bool     { return t.hard }
func (t *spreadTerm) dynamic() bool      { return true }

func (t *spreadTerm) reject(c *cell, i int) string {
	if !t.hard {
		return ""
	}
	n := t.tl.count(i)
	switch {
	case n < 0:
		return t.nolabel
	case n+1-t.tl.min > t.maxSkew:
		return t.why
	}
	return ""
}

// score is 1 in a domain at the minimum and falls towards 0 as the domain
// runs ahead of it: 1/2 at maxSkew ahead.
func (t *spreadTerm) score(c *cell, i int) float64 {
	if t.hard {
		return 0
	}
	n := t.tl.count(i)
	if n < 0 {
		return 0
	}
	ahead := float64(max(n-t.tl.min, 0))
	return t.weight * (1 - ahead/(ahead+float64(t.maxSkew)))
}

// affinityTerm keeps replicas in (affinity) or out of (anti-affinity) the
// domains of a key that run the target's allocations. A rule without a
// workload targets the group's own replicas: anti-affinity over rack then
// means never two replicas in one rack, and affinity means all of them in
// the rack of the first. Affinity refuses nodes without the key;
// anti-affinity does not (such a node shares a domain with nobody).
type affinityTerm struct {
	anti, hard, self bool
	// leads: the rule is about replicas of the group being placed, so the
	// first of them picks the domain.
	leads        bool
	weight       float64
	key          string
	t            target
	tl           *tally
	why, nolabel string
}

func newAffinityTerm(c *cell, g *group, w *api.Workload, r api.AffinityRule, anti bool) *affinityTerm {
	t := &affinityTerm{anti: anti, hard: r.Mode != api.ModeSoft, weight: weightOf(r.Weight), key: r.Key,
		t: target{namespace: api.NamespaceOf(w.Namespace), workload: r.Workload, group: r.Group}}
	if r.Workload == "" {
		t.t = target{namespace: api.NamespaceOf(w.Namespace), workload: w.Name, group: g.tg.Name}
	}
	t.self = t.t.workload == w.Name
	t.leads = t.self && (t.t.group == "" || t.t.group == g.tg.Name)
	t.tl = c.tallyOf(c.index(r.Key), t.t, t.self)
	who := t.t.String()
	if r.Workload == "" {
		who = "a replica of this group"
	}
	if anti {
		t.why = fmt.Sprintf("%s already runs %s (anti-affinity)", r.Key, who)
	} else {
		t.why = fmt.Sprintf("%s does not run %s (affinity)", r.Key, who)
		t.nolabel = "no label " + r.Key + " (affinity)"
	}
	return t
}

func (t *affinityTerm) label() string {
	kind := "affinity"
	if t.anti {
		kind = "anti-affinity"
	}
	return kind + " " + t.key + " " + t.t.String()
}

func (t *affinityTerm) dynamic() bool      { return t.self }
func (t *affinityTerm) required() bool     { return t.hard }
func (t *affinityTerm) countTally() *tally { return t.tl }

func (t *affinityTerm) reject(c *cell, i int) string {
	if !t.hard {
		return ""
	}
	n := t.tl.count(i)
	if t.anti {
		if n > 0 {
			return t.why
		}
		return ""
	}
	switch {
	case n < 0:
		return t.nolabel
	case t.leads && t.tl.placed == 0:
		return "" // the first replica picks the domain the others join
	case n == 0:
		return t.why
	}
	return ""
}

// score: affinity counts fully where the target runs; anti-affinity
// counts fully where it does not and less the more of it there is.
func (t *affinityTerm) score(c *cell, i int) float64 {
	if t.hard {
		return 0
	}
	n := max(t.tl.count(i), 0)
	if t.anti {
		return t.weight / float64(1+n)
	}
	if n > 0 {
		return t.weight
	}
	return 0
}

// peerTerm scores a node by the mean network hop count (topology.Hops)
// from it to the peer workload's allocations: 1 when they all share the
// node, 0 when every one is MaxHops away. It counts the peer's
// allocations per domain of each network level, so a node costs one array
// access per level.
type peerTerm struct {
	weight float64
	t      target
	self   bool
	levels []*tally // one per topology.NetworkLevels
}

func newPeerTerm(c *cell, w *api.Workload, own target, r api.PeerRule) *peerTerm {
	t := &peerTerm{weight: weightOf(r.Weight), t: target{namespace: api.NamespaceOf(w.Namespace), workload: r.Workload}}
	if r.Workload == "" {
		t.t = own
	}
	t.self = t.t.workload == w.Name
	for _, l := range topology.NetworkLevels {
		t.levels = append(t.levels, c.tallyOf(c.levelIndex(l), t.t, t.self))
	}
	return t
}

func (t *peerTerm) label() string                { return "near " + t.t.String() }
func (t *peerTerm) dynamic() bool                { return t.self }
func (t *peerTerm) required() bool               { return false }
func (t *peerTerm) countTally() *tally           { return nil }
func (t *peerTerm) reject(c *cell, i int) string { return "" }

func (t *peerTerm) score(c *cell, i int) float64 {
	total := t.levels[0].total
	if total == 0 {
		return 0
	}
	return t.weight * (1 - t.meanHops(i)/topology.MaxHops)
}

// meanHops is the mean hop count from node i to the peer's allocations.
// Levels nest, so the allocations first met at a level are its count less
// the previous level's.
func (t *peerTerm) meanHops(i int) float64 {
	total := t.levels[0].total
	prev, sum := int32(0), 0
	for l, tl := range t.levels {
		n := max(tl.count(i), prev)
		sum += int(n-prev) * topology.NetworkLevels[l].Hops
		prev = n
	}
	sum += (total - int(prev)) * topology.MaxHops
	return float64(sum) / float64(total)
}

// dataTerm prefers (or requires) nodes that hold shards of a dataset, as
// their label data.strata.dev/<dataset> says: an integer value is the
// shard count, any other value one shard. The score is the node's shards
// over the most any node of the cell holds.
type dataTerm struct {
	dataset, key string
	hard         bool
	weight       float64
	most         int64
	why          string
	// With a NodeIndex, the shards of every value of the label, read
	// through its column; nil without one.
	col     *labelColumn
	byValue []int64
}

func newDataTerm(c *cell, r api.DataRule) *dataTerm {
	t := &dataTerm{dataset: r.Dataset, key: api.DatasetLabelPrefix + r.Dataset, hard: r.Mode == api.ModeHard,
		weight: weightOf(r.Weight), why: "no shards of dataset " + r.Dataset}
	if c.nodeIndex != nil {
		// Every value of the column is some node's, so the most any node
		// holds is the most any value says.
		t.col = c.nodeIndex.column(t.key)
		t.byValue = make([]int64, len(t.col.values))
		for v, text := range t.col.values {
			t.byValue[v] = shardCount(text)
			t.most = max(t.most, t.byValue[v])
		}
		return t
	}
	if !t.hard {
		for i := range c.nodes {
			t.most = max(t.most, t.shards(c, i))
		}
	}
	return t
}

func (t *dataTerm) shards(c *cell, i int) int64 {
	if t.col != nil {
		if v := t.col.of[i]; v >= 0 {
			return t.byValue[v]
		}
		return 0
	}
	v, ok := c.node(i).Labels[t.key]
	if !ok {
		return 0
	}
	return shardCount(v)
}

// shardCount reads a dataset label's value: an integer is the shard count,
// any other value one shard.
func shardCount(v string) int64 {
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return max(n, 0)
	}
	return 1
}

func (t *dataTerm) label() string      { return "data " + t.dataset }
func (t *dataTerm) dynamic() bool      { return false }
func (t *dataTerm) required() bool     { return t.hard }
func (t *dataTerm) countTally() *tally { return nil }

func (t *dataTerm) reject(c *cell, i int) string {
	if t.hard && t.shards(c, i) == 0 {
		return t.why
	}
	return ""
}

func (t *dataTerm) score(c *cell, i int) float64 {
	if t.hard || t.most == 0 {
		return 0
	}
	return t.weight * float64(t.shards(c, i)) / float64(t.most)
}

var (
	_ term = (*spreadTerm)(nil)
	_ term = (*affinityTerm)(nil)
	_ term = (*peerTerm)(nil)
	_ term = (*dataTerm)(nil)
)

// keeps reports whether a is an allocation the group has affinity to, which
// preemption must leave alone.
func (g *group) keeps(a *api.Allocation) bool {
	for _, t := range g.keep {
		if t.matches(a) {
			return true
		}
	}
	return false
}
