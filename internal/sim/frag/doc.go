// Package frag connects the fragmentation measure (internal/frag) to the
// simulator: the target workload of a trace's pods (FromPods), a simulated
// node's fragmentation (NodeFrag) and the cell-wide total kept current as
// nodes change (Tracker). It never mutates the cluster and holds no global
// state.
package frag
