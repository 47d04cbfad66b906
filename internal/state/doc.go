// Package state is the control plane's in-memory MVCC store: workloads,
// nodes, allocations and evaluations, indexed by the raft index that last
// wrote them (hashicorp/go-memdb underneath).
//
// Only the FSM writes to a Store, and only with the raft index of the entry
// being applied, so every server that applies the same log holds the same
// state. Readers take a Snapshot — an immutable view at one index — and may
// block until the store moves past an index they have seen (blocking queries).
// The store keeps each node's Allocated resources up to date incrementally as
// allocations change; it never recomputes them from all allocations. A
// Snapshot satisfies the scheduler's State and reports a TopologyVersion
// (topology.go) by which the scheduler shares its node tables; the store
// does not import the scheduler.
//
// The package must never do I/O, read the clock, or make random choices: all
// of that happens before a command is proposed to raft.
package state
