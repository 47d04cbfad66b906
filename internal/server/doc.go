// Package server is Strata's control plane: raft (hashicorp/raft with a bbolt
// log), the deterministic FSM that applies commands to the state store, the
// HTTP+JSON /v1 API, and the leader's loops — the evaluation broker, the
// scheduler workers, the single plan applier and node liveness.
//
// Everything that changes state goes through raft as a command. IDs,
// timestamps and random choices are made by the leader before a command is
// proposed, never inside the FSM (invariant 3). Only the plan applier commits
// placements (invariant 2), after re-checking every node of a plan against
// the newest state.
package server
