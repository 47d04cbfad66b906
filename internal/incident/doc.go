// Package incident groups the cell's trouble into incidents with a
// probable cause: allocations that failed, were OOM-killed, restarted,
// failed health checks or were lost, nodes that went down, groups slow to
// place. Signals that share something — a node, a rack, a power zone, a
// switch, a workload version, a deployment, a driver — and arrive close
// together are one incident, and the thing they share is its cause:
// "12 allocations on 3 nodes of rack r7 failed within 40 s: rack r7".
//
// A cause is chosen by a test, not a threshold (candidates.go): among the
// troubled subjects still unexplained, a value that k of n share is a
// candidate when k is improbably high for its share p of the cell
// (binomial tail P(X ≥ k | n, p), combined over allocations and nodes by
// Fisher's method, Bonferroni-corrected over the values tested), at least
// MinSupport subjects on MinNodes nodes share it, and it is MinLift times
// over-represented. The most significant candidate wins, takes its
// signals, and the search goes on with the rest (explaining away). Open
// incidents grow with matching signals, widen when a wider domain explains
// them and new trouble together (two racks of one power zone), and close
// after Quiet without news. docs/incidents.md explains the statistics.
//
// The Engine is a deterministic core: the caller feeds it signals
// (Observe), the cell's population (SetCensus: how many allocations and
// nodes each rack, version, driver holds) and the time (Step); it has no
// clock, no I/O, no goroutines, and is not safe for concurrent use. Its
// memory is bounded by its Policy (pending signals, open and closed
// incidents, subjects and references per incident). It must never decide
// anything about the cell — it explains; the rollout guard and the
// operators act.
package incident
