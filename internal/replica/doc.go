// Package replica is one server's part in a replicated control plane:
// raft (hashicorp/raft, its log and stable store in bbolt, file
// snapshots), forming a cell (--bootstrap-expect, --join), readiness,
// serving every request where it belongs (here, by the leader, or from
// this server's state with ?stale), the leader's terms, and the
// operator's endpoints (raft configuration, peers, snapshots).
//
// It knows nothing of workloads: it replicates an FSM (an interface: the
// cell's is internal/fsm) and hands leadership to a Leadership (the
// cell's is internal/leader). A second control plane — a global layer
// with its own FSM — opens a Replica of its own with the same code.
//
// # How to use it
//
//  1. Open(cfg, fsm, leadership) opens raft's log in cfg.DataDir and the
//     server port (internal/serverport): raft and the servers' own HTTP
//     share it. A lone server without a server port runs over raft's
//     in-memory transport.
//  2. Start(api) serves the server port — formation's hello and join, and
//     api for the requests followers forward — forms the cell
//     (formation.go), and follows leadership: when this server is elected
//     it waits for a barrier of its term (every entry of earlier terms is
//     then applied), calls Leadership.Lead with a context that ends with
//     the term, and only then answers as the leader; when the term ends it
//     cancels that context and calls Leadership.Follow (leadership.go).
//  3. Every route of the API goes through Gate (routing.go): a Local
//     route is served at once; any other waits for readiness
//     (readiness.go), then is served by the leader — a read once the
//     leader confirmed it leads, and cut short when the term ends — or
//     forwarded to it over the server port, or held while the cell elects
//     one.
//  4. Commit(name, entries...) hands encoded entries to raft (on the
//     leader) and returns the FSM's answer to the last. Its errors say
//     what a client may do: ErrNotLeader (nothing was applied: retry),
//     ErrOutcomeUnknown (read before retrying).
//  5. Routes() are the replica's endpoints for the API's table.
//  6. Close ends the term, stops the server port and shuts raft down.
//
// # Locks
//
// The replica holds no lock across a raft wait, a call into the FSM or
// the Leadership, or I/O. Its terms belong to one goroutine (leadership's
// run), which begins and ends them in order and which Close cancels: a
// barrier that has not returned never holds Close up. The rest is raft's
// own locking, the readiness latches (atomics) and formation's peer book
// (a leaf mutex). The server's whole lock order is in
// docs/architecture.md.
//
// # What it must never do
//
//   - Decode an entry or know a command: entries are bytes to it.
//   - Answer as the leader before the barrier of its term returned and
//     Lead returned nil, or serve a non-Local route before it is ready:
//     a server that has not applied everything committed would answer
//     from an old state (invariant 7).
//   - Forward a forwarded request again, or hold a lock across a wait.
//   - Decide who may do what: the API's wrapper applies the ACLs, after
//     the replica routed the request to the leader.
package replica
