// Package fsm is the cell's deterministic state machine: the raft
// commands, how each applies to the state store (internal/state), the
// events each derives, what each asks of the loops once applied, and the
// compact encoding of plans in parts.
//
// # What it owns
//
//   - The command table (table.go): one line per kind of raft entry, with
//     its persisted value, its name, its body type, its Apply, Events and
//     Effects. The table is checked at start-up: a value, a name or a
//     proposable body type given twice stops the program (NewTable).
//   - FSM: decodes an entry, derives its events from the state before it,
//     applies it in one store transaction (an entry is applied whole or
//     not at all), and hands the entry's Effects to OnApply.
//   - The snapshot encoding raft's snapshots and operator snapshot files
//     share (Snapshot, FSM.Restore).
//   - Proposer: encodes a command body and commits it through a Log (the
//     replica). The leader's loops and the HTTP API write state through it
//     and nothing else.
//   - PlanParts: a committed plan as entries of about a MiB, cut between
//     units that must commit together.
//
// # How to use it
//
// A proposer builds a command completely — new ids, timestamps, the
// evaluations the change causes (internal/trigger) — and calls
// Proposer.Propose(&fsm.UpsertWorkload{...}). The replica commits the
// entry and calls FSM.Apply on every server, in log order; Apply's answer
// (Registered, Stopped, Migrated, or an error) comes back to the
// proposer. The server's composition root sets OnApply to hand Effects to
// the leader (evaluations to enqueue, capacity to unblock, reverts to
// look at) and to write the join token file.
//
// Adding a command: see the comment on Commands.
//
// # What it must never do
//
//   - Read a clock, draw a random number or make an id: every time and id
//     is in the entry, stamped by the proposer (invariant 3). Apply on
//     every server must compute the same state from the same log.
//   - Import raft or net/http: it is driven through Apply and knows
//     nothing of how entries are replicated or requested.
//   - Renumber or reuse a command value: logs and snapshots on disk hold
//     them (TestCommandValuesNeverChange).
//   - Act on Effects itself, or block in OnApply: the loops act, on the
//     leader, after the entry committed.
package fsm
