package topology

import "slices"

// Well-known label keys (api.Label* spell the same names).
const (
	Node       = "node"
	Rack       = "rack"
	Row        = "row"
	Datacenter = "datacenter"
	Zone       = "zone"
	Region     = "region"
	Switch     = "switch"
	Spine      = "spine"
	PowerZone  = "powerZone"
)

// Chain lists the nested failure-domain keys, tightest first.
var Chain = []string{Node, Rack, Row, Datacenter, Zone, Region}

// Wider returns the keys a search that starts at key widens through,
// tightest first: key's place in Chain and every wider key; a key off the
// chain (powerZone, switch, spine, any attribute) comes first, followed by
// the chain from rack up. An empty key gives nothing.
func Wider(key string) []string {
	if key == "" {
		return nil
	}
	if k := slices.Index(Chain, key); k >= 0 {
		return Chain[k:]
	}
	return append([]string{key}, Chain[1:]...)
}

// Level is one network level: two nodes in the same domain of the level
// talk through a path of Hops links. A domain is named by the first of Keys
// the node has, so a cell that labels its top-of-rack switches uses them
// and one that only labels racks uses racks.
type Level struct {
	Keys []string
	Hops int
}

// NetworkLevels is a Clos fabric seen from a node, nearest first: the node
// itself, its top-of-rack switch (or rack), its spine block (or row), its
// datacenter, zone and region. The hop counts are the links of the
// shortest path up to the level's switch and back down.
var NetworkLevels = []Level{
	{Keys: []string{Node}, Hops: 0},
	{Keys: []string{Switch, Rack}, Hops: 2},
	{Keys: []string{Spine, Row}, Hops: 4},
	{Keys: []string{Datacenter}, Hops: 6},
	{Keys: []string{Zone}, Hops: 8},
	{Keys: []string{Region}, Hops: 10},
}

// MaxHops is the cost between nodes that share no level (another region,
// or labels too sparse to tell).
const MaxHops = 12

// Domain names node's domain of key: the node's id for "node", otherwise
// the label's value; false when the node has no such label.
func Domain(key, nodeID string, labels map[string]string) (string, bool) {
	if key == Node {
		if v, ok := labels[Node]; ok {
			return v, true
		}
		return nodeID, nodeID != ""
	}
	v, ok := labels[key]
	return v, ok
}

// LevelDomain names node's domain at network level l: the first of the
// level's keys that the node has, prefixed by the key so that a switch and
// a rack of the same name never meet.
func LevelDomain(l Level, nodeID string, labels map[string]string) (string, bool) {
	for _, k := range l.Keys {
		if v, ok := Domain(k, nodeID, labels); ok {
			return k + "=" + v, true
		}
	}
	return "", false
}

// Hops is the network distance between two nodes: the hops of the nearest
// level whose domain they share, MaxHops when they share none.
func Hops(aID string, a map[string]string, bID string, b map[string]string) int {
	for _, l := range NetworkLevels {
		da, okA := LevelDomain(l, aID, a)
		db, okB := LevelDomain(l, bID, b)
		if okA && okB && da == db {
			return l.Hops
		}
	}
	return MaxHops
}
