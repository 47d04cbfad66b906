// Package nodeauth holds the small cryptographic pieces of node identity:
// node secrets and the verifiers the cell stores instead of them, the
// constant-time checks of secrets and join tokens, and the signatures with
// which a server and an agent prove themselves to each other when the
// server fetches a task's log from the agent.
//
// It does no I/O and keeps no state; the server decides who may do what,
// the agent keeps its secret in its data dir. It must never log or return
// a secret it was given.
package nodeauth
