// Package gc decides which terminal allocations, evaluations and
// deployments the cell forgets, and when (docs/gc.md). Collect is a pure
// function of what the caller read from the state, the retention policy
// and the time it passes in: no clock, no I/O. It never names a live
// object, nor one the cell still reasons with: the newest allocation of a
// replica (a finished batch task, a replica its reschedule policy left
// dead), the failures a replica's reschedule count and backoff are made
// of, the newest evaluation of a workload (its status explains it), the
// newest deployment of a workload (a failed one halts the update). The
// leader proposes what it returns; the FSM deletes only what is still
// terminal when the command applies.
package gc
