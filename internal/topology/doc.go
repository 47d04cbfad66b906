// Package topology owns the shape of a cell's failure and network domains:
// the chain of nested topology keys (node ⊂ rack ⊂ row ⊂ datacenter ⊂ zone ⊂
// region), the network levels a packet climbs between two nodes and the hop
// count that costs, read from node labels. It is pure: functions of labels
// only, no state, no I/O.
package topology
