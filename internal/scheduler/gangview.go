package scheduler

import (
	"strings"

	"github.com/strata-dev/strata/api"
)

// A gang is tried in many topology domains, each a trial that places members
// for real and is rolled back when too few fit. At 100k nodes most of those
// trials are hopeless (a rack of CPU machines for a GPU gang), so the engine
// bounds them first, in two ways that never change a plan:
//
//   - hardView: the part of the seeded order whose nodes pass the group's
//     static filters (readiness, required labels, GPU model: what no
//     placement or eviction in the plan can change). Trials walk it
//     instead of the whole cell or domain; the filter chain would have
//     rejected the other nodes anyway, and relative order (which breaks
//     ties) is kept. It depends only on the filters, so it is computed
//     once per plan for all groups with the same static filters (the
//     gangs of one training job).
//   - room: per node, how many members the aggregate dimensions could take
//     at most — from what is free, or, when evicting, free plus every
//     allocation that could be preempted. Trials walk only nodes with
//     room. A domain whose room is below the gang's size cannot hold it; a
//     trial there only matters for the best count the failure reports, so
//     it is skipped when its room cannot beat that count either.

// staticKey names what g's static filters read of the group: two groups
// with the same key accept the same nodes. Each filter of kindStatic
// names its own part (filter.key), so a new static filter cannot be left
// out of it.
func staticKey(g *group) string {
	var sb strings.Builder
	for _, f := range g.filters {
		if f.kind() == kindStatic {
			sb.WriteString(f.key(g))
			sb.WriteByte(';')
		}
	}
	return sb.String()
}

// gangSearch is what the gang search keeps across the gangs of one plan
// (the gangs of one training job share it): the cell split by each
// topology key, the static views by static key, and the room tables. It
// belongs to the plan's placer, made by the first gang; the cell knows
// nothing of it.
type gangSearch struct {
	c      *cell
	splits map[string]*domainSplit // per label key
	views  map[string]*hardView    // per static key (staticKey)
	rooms  map[roomKey]*roomTable
	room   []int32 // the table in use (room)
}

// gangs returns the plan's gang search, making it on first use.
func (p *placer) gangs() *gangSearch {
	if p.search == nil {
		p.search = &gangSearch{c: p.cell, splits: map[string]*domainSplit{}, views: map[string]*hardView{}, rooms: map[roomKey]*roomTable{}}
	}
	return p.search
}

// hardView is the part of the cell a group's static filters accept.
type hardView struct {
	order []int32                 // in seeded order
	split map[string][]viewDomain // domains per key, cut down
}

// viewDomain is a domain cut down to a view, and the whole domain.
type viewDomain struct {
	nodes, full []int32
}

// view returns the part of the cell g's static filters accept, shared by
// the groups with the same static key.
func (gs *gangSearch) view(g *group) *hardView {
	key := staticKey(g)
	if hv, ok := gs.views[key]; ok {
		return hv
	}
	c := gs.c
	hv := &hardView{split: make(map[string][]viewDomain)}
	for _, i := range c.order {
		if c.passesStatic(g, int(i)) {
			hv.order = append(hv.order, i)
		}
	}
	gs.views[key] = hv
	return hv
}

// passesStatic reports whether node i passes g's filters of kindStatic.
func (c *cell) passesStatic(g *group, i int) bool {
	n := c.at(i)
	for _, f := range g.filters {
		if f.kind() == kindStatic && f.check(g, c, n, i) != "" {
			return false
		}
	}
	return true
}

// domains is the cell's domains of key (see (*gangSearch).domains) cut
// down to the view, in the same order; domains left empty are dropped.
func (hv *hardView) domains(gs *gangSearch, key string) []viewDomain {
	if d, ok := hv.split[key]; ok {
		return d
	}
	split := gs.split(key)
	if len(split.lists) == 0 {
		return nil
	}
	lists := make([][]int32, len(split.lists))
	for _, i := range hv.order {
		if k := split.of[i]; k >= 0 {
			lists[k] = append(lists[k], i)
		}
	}
	var out []viewDomain
	for k, l := range lists {
		if len(l) > 0 {
			out = append(out, viewDomain{nodes: l, full: split.lists[k]})
		}
	}
	hv.split[key] = out
	return out
}

// roomKey names one room table of a plan: a static view, a request and
// whether evictions count. Within a plan the evicting workload (its name
// and priority) is the same for all groups.
type roomKey struct {
	hv      *hardView
	want    api.Resources
	preempt bool
}

// roomTable is the room of every node of a view (-1 outside it), kept
// across the gangs of a plan: a table is brought up to date by
// recomputing only the nodes changed since (cell.changes, the cell's log
// of nodes whose room moved), so the gangs of one training job share the
// work of a pass over the view.
type roomTable struct {
	room  []int32
	total int64
	seen  int // len(cell.changes) when last brought up to date
}

// maxRoom bounds a node's room; sums are compared with gang sizes only.
const maxRoom = 1 << 20

// room brings the room table of g's view up to date, makes it the search's
// current one (gs.room) and returns the sum over the view, at most need.
// Without eviction a node's room counts what is free; with eviction,
// what is free plus the allocations victimsOn could take (evictable).
func (p *placer) room(g *group, hv *hardView, preempt bool, need int) int {
	c, gs := p.cell, p.gangs()
	key := roomKey{hv: hv, want: g.req.Resources, preempt: preempt}
	t, ok := gs.rooms[key]
	if !ok {
		t = &roomTable{room: make([]int32, c.size())}
		for i := range t.room {
			t.room[i] = -1
		}
		for _, i := range hv.order {
			t.room[i] = int32(p.nodeRoom(&key.want, int(i), preempt))
			t.total += int64(t.room[i])
		}
		gs.rooms[key] = t
	} else {
		for _, i := range c.changes[t.seen:] {
			if old := t.room[i]; old >= 0 {
				t.room[i] = int32(p.nodeRoom(&key.want, int(i), preempt))
				t.total += int64(t.room[i] - old)
			}
		}
	}
	t.seen = len(c.changes)
	gs.room = t.room
	return int(min(t.total, int64(need)))
}

// nodeRoom is node i's room for want.
func (p *placer) nodeRoom(want *api.Resources, i int, preempt bool) int {
	c := p.cell
	n := c.at(i)
	avail := n.free
	if preempt {
		for _, a := range c.st.AllocsByNode(n.node.ID) {
			if p.evictable(a) {
				avail = avail.Add(a.Resources)
			}
		}
	}
	return fitCount(want, &avail, maxRoom)
}

// withRoom returns the nodes of order whose room is not zero, in order.
// A trial walking only those places exactly what it would place walking
// order: the others fail the resource filter, and victimsOn finds nothing
// on them, all through the trial (placements only lower a node's room and
// an eviction moves resources from the evictable part to the free part).
func (gs *gangSearch) withRoom(order []int32) []int32 {
	out := make([]int32, 0, len(order))
	for _, i := range order {
		if gs.room[i] > 0 {
			out = append(out, i)
		}
	}
	return out
}

// roomOf sums the room of the nodes of order, stopping at need.
func (gs *gangSearch) roomOf(order []int32, need int) int {
	total := 0
	for _, i := range order {
		if total += int(gs.room[i]); total >= need {
			return need
		}
	}
	return total
}

// fitCount is how many times want fits in avail over the dimensions the
// resource filter checks, at most limit.
func fitCount(want, avail *api.Resources, limit int) int {
	k := int64(limit)
	for _, d := range aggregateDims {
		if w := *want.Of(d); w > 0 {
			k = min(k, max(*avail.Of(d), 0)/w)
		}
	}
	return int(k)
}

// domains splits the seeded order by the value of label key: one slice per
// value, each in seeded order, ordered by their first node in it. Nodes
// without the label belong to no domain of that key. A key that puts the
// whole cell in one domain yields nothing, the cell being tried anyway.
// Labels and the order do not change during a plan, so each key is split
// once per plan.
func (gs *gangSearch) domains(key string) [][]int32 { return gs.split(key).lists }

// domainSplit is a key's domains and, per node, the index of its domain
// (-1: none).
type domainSplit struct {
	lists [][]int32
	of    []int32
}

func (gs *gangSearch) split(key string) *domainSplit {
	if d, ok := gs.splits[key]; ok {
		return d
	}
	d := gs.c.splitBy(key)
	gs.splits[key] = d
	return d
}

func (c *cell) splitBy(key string) *domainSplit {
	d := &domainSplit{of: make([]int32, c.size())}
	for i := range d.of {
		d.of[i] = -1
	}
	// Node i's value of key as a small id: from the index when there is
	// one, else numbered here the same way.
	var col *labelColumn
	if c.nodeIndex != nil {
		col = c.nodeIndex.column(key)
	} else {
		col = newLabelColumn(c.nodes, key)
	}
	var domainOf []int32 // value id → 1 + domain; 0: none yet
	for _, i := range c.order {
		v := col.of[i]
		if v < 0 {
			continue
		}
		for int(v) >= len(domainOf) {
			domainOf = append(domainOf, 0)
		}
		if domainOf[v] == 0 {
			d.lists = append(d.lists, nil)
			domainOf[v] = int32(len(d.lists))
		}
		k := domainOf[v] - 1
		d.lists[k] = append(d.lists[k], i)
		d.of[i] = k
	}
	if len(d.lists) == 1 && len(d.lists[0]) == len(c.order) {
		return &domainSplit{}
	}
	return d
}
