// Package leader runs the cell's leader: the loops that act on the whole
// cell while this server leads — the evaluation broker and the scheduler
// workers, the single plan applier, node liveness (heartbeats and their
// down guard), drains, automatic quarantine, garbage collection and
// deployments' auto-revert — and the services the API asks of them.
//
// # How it is driven
//
//   - The replica calls Lead when this server's term begins (after a
//     barrier: every earlier entry is applied) and Follow when it ends.
//     Lead gives a new cell its identity, fills the broker from the state
//     (pending and blocked evaluations), gives every known node a fresh
//     grace period, and starts every loop of the table (loops.go) under
//     the term's context; Follow drops what only a leader keeps.
//   - The FSM hands it every applied entry's Effects (Applied):
//     evaluations to enqueue, capacity to unblock, a failed deployment to
//     look at. On a follower the broker is off and drops them.
//   - The API asks it to renew a node's lease (Heartbeat), whether a
//     workload is draining (DrainWants), to plan and commit migrations,
//     and to run the scheduler without committing (DryRun).
//
// # The loops
//
// One table, loops.go: each loop has a name, runs periodically (Step
// every Every, and when woken) or on its own (Run), starts and stops with
// the term, and reports itself in strata_leader_loop_running and
// strata_leader_loop_steps_total. New refuses a table that cannot run.
//
// A panic while scheduling one evaluation fails that evaluation, with the
// panic and its stack, and counts it (strata_scheduler_panics_total); the
// worker and the leader go on.
//
// # Locks
//
// Every lock here is a leaf: the broker's, the heartbeat tracker's (which
// holds the down guard), the drainer's, the automatic quarantine's, the
// auto-revert loop's. None is held across a proposal, a raft wait, a
// scheduler run or a call into another of them. docs/architecture.md has
// the server's whole lock order.
//
// # What it must never do
//
//   - Serve HTTP, or write state other than by proposing (fsm.Proposer).
//   - Commit a placement anywhere but in the plan applier, which re-checks
//     every node of a plan against the newest state (invariant 2).
//   - Read time other than through Config.Now, or make evaluations other
//     than through internal/trigger.
//   - Act while not leading: every loop runs under the term's context.
package leader
