// Package quarantine decides which nodes the leader fences off on its own:
// a node whose allocations fail far more often than the rest of the cell's
// (a one-sided binomial test against the other nodes' pooled failure rate,
// with a minimum count, a minimum of distinct workloads and an effect
// size), or whose heartbeats flap (went down several times in a window).
// A cap keeps it from quarantining more than a fraction of the cell: a
// failure of the whole cell is not a node's fault.
//
// It is a pure function of what the caller read from the state and the
// time it passes in (Decide): no clock, no I/O, no randomness, so the same
// cell gives the same verdicts on every server and in tests. It never
// lifts a quarantine (an operator does) and never judges a node that is
// quarantined already. docs/nodes.md explains and justifies the test.
package quarantine
