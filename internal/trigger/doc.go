// Package trigger is the one place where evaluations are made: from a
// description of what changed — a workload registered, stopped or
// reverted, a deployment promoted or failed, a node down, back, drained,
// quarantined or purged, agents' reports, a plan's preemptions — it
// decides which workloads must be evaluated again, and builds the raft
// command that records the change together with those evaluations, so
// that one entry holds both (a leader that fails between them cannot
// lose the evaluation).
//
// Who calls it: the HTTP API for the changes users and agents ask for,
// the leader's loops for their own (node liveness, drains, automatic
// quarantine, reverts, the plan applier). The scheduler makes its own
// follow-ups (a delayed replacement); the worker only updates
// evaluations it runs.
//
// # What it must never do
//
//   - Propose, read a clock or make an id of its own: Maker's Now and
//     NewID are injected (a test gives fixed ones), and the caller
//     proposes what it returns.
//   - Decide where anything runs: that is the scheduler's, which the
//     evaluations it makes will run.
package trigger
