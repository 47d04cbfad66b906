package failsim

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/strata-dev/strata/internal/predict"
	"github.com/strata-dev/strata/internal/sim/trace"
)

// Failure is a node failure on a simulated cell: node Node (an index
// into the cell's nodes) at At.
type Failure struct {
	At   int64
	Node int
}

// OnCell is the tickets laid onto a cell of n nodes that has no failure
// data of its own (the openb GPU cell): the tickets' nodes, in rack order,
// become the cell's nodes 0..n-1, so each rack's failures strike nodes
// that are neighbours in the cell as they were in the rack. Past holds the
// failures of those nodes before start (at their own times: the failure
// model's history); Window those from start on, their times made relative
// to start (seconds into the simulation).
type OnCell struct {
	Places []predict.Place
	Past   []Failure
	Window []Failure
}

// MapOnto lays tickets onto a cell of n nodes from time start (seconds
// since 1970).
func MapOnto(tickets []trace.Ticket, n int, start int64) (*OnCell, error) {
	type nodeKey struct{ rack, node string }
	seen := map[nodeKey]bool{}
	var keys []nodeKey
	room := map[string]string{}
	for _, t := range tickets {
		k := nodeKey{t.Rack, t.Node}
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
			room[t.Rack] = t.Room
		}
	}
	if len(keys) < n {
		return nil, fmt.Errorf("the tickets name %d nodes, the cell has %d", len(keys), n)
	}
	slices.SortFunc(keys, func(a, b nodeKey) int {
		if c := cmp.Compare(a.rack, b.rack); c != 0 {
			return c
		}
		return cmp.Compare(a.node, b.node)
	})
	out := &OnCell{Places: make([]predict.Place, n)}
	index := map[string]int{}
	for i, k := range keys[:n] {
		out.Places[i] = predict.Place{Node: k.node, Rack: k.rack, Room: room[k.rack]}
		index[k.node] = i
	}
	for _, t := range tickets {
		i, ok := index[t.Node]
		if !ok {
			continue
		}
		if t.Time < start {
			out.Past = append(out.Past, Failure{At: t.Time, Node: i})
		} else {
			out.Window = append(out.Window, Failure{At: t.Time - start, Node: i})
		}
	}
	return out, nil
}
