package failsim

import (
	"fmt"
	"slices"

	"github.com/strata-dev/strata/internal/predict"
	"github.com/strata-dev/strata/internal/sim/trace"
)

// Fleet is the simulated fleet of a ticket replay: every rack the tickets
// name, in the room they name, filled to at least NodesPerRack nodes: the
// nodes the tickets name in it and, for the rest, nodes that never fail
// in the tickets' year (named RACK/spare-K). The tickets carry no count of
// the machines that did not fail; the fill is the one assumption, and
// docs/prediction.md shows how the results move with it.
type Fleet struct {
	Places []predict.Place
	rack   []int32 // per node: index of its rack
	room   []int32 // per node: index of its room
	index  map[string]int
}

// BuildFleet builds the fleet of tickets (racks filled to nodesPerRack).
// A node the tickets place in two racks is an error: the topology would
// be ambiguous.
func BuildFleet(tickets []trace.Ticket, nodesPerRack int) (*Fleet, error) {
	type rackInfo struct {
		room  string
		nodes []string
	}
	racks := map[string]*rackInfo{}
	var rackOrder []string
	nodeRack := map[string]string{}
	for _, t := range tickets {
		if r, ok := nodeRack[t.Node]; ok && r != t.Rack {
			return nil, fmt.Errorf("node %s is in rack %s and rack %s", t.Node, r, t.Rack)
		}
		nodeRack[t.Node] = t.Rack
		ri := racks[t.Rack]
		if ri == nil {
			ri = &rackInfo{room: t.Room}
			racks[t.Rack] = ri
			rackOrder = append(rackOrder, t.Rack)
		}
		if !slices.Contains(ri.nodes, t.Node) {
			ri.nodes = append(ri.nodes, t.Node)
		}
	}
	slices.Sort(rackOrder)
	f := &Fleet{index: map[string]int{}}
	rooms := map[string]int32{}
	for ri, rack := range rackOrder {
		info := racks[rack]
		slices.Sort(info.nodes)
		for k := len(info.nodes); k < nodesPerRack; k++ {
			info.nodes = append(info.nodes, fmt.Sprintf("%s/spare-%d", rack, k))
		}
		room, ok := rooms[info.room]
		if !ok {
			room = int32(len(rooms))
			rooms[info.room] = room
		}
		for _, n := range info.nodes {
			f.index[n] = len(f.Places)
			f.Places = append(f.Places, predict.Place{Node: n, Rack: rack, Room: info.room})
			f.rack = append(f.rack, int32(ri))
			f.room = append(f.room, room)
		}
	}
	return f, nil
}

// Len is the number of nodes.
func (f *Fleet) Len() int { return len(f.Places) }

// Racks is the number of racks.
func (f *Fleet) Racks() int {
	if len(f.rack) == 0 {
		return 0
	}
	return int(slices.Max(f.rack)) + 1
}
