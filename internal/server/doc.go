// Package server is the composition root of Strata's control plane: it
// opens a server's data dir and wires the rooms — the state machine
// (internal/fsm), raft and the cell's formation (internal/replica), the
// leader's loops (internal/leader), the HTTP API (internal/httpapi) and
// where evaluations come from (internal/trigger) — into one daemon with
// one shape: New(cfg), then Run(ctx) (or Close).
//
// It owns what belongs to the daemon rather than to a room: the
// configuration and its defaults, the server's id and keyring in its data
// dir, the TLS configurations made from its files, the metrics registry,
// the API's listener, the join token file every server keeps, and the
// order things start and stop in: the FSM before raft replays into it, the
// leader before the FSM tells it what applied, the API before the
// replica forwards to it; on close, the API first, then the leader's term
// and raft, then the loops.
//
// It holds no domain logic and must grow none: a new capability is a
// command (fsm), a route (httpapi), a loop (leader) or a room of its own
// wired here in a line or two.
package server
