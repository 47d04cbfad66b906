// Package agent is Strata's node agent: it fingerprints the machine,
// registers it with the control plane and heartbeats, watches the node's
// allocations with blocking queries, runs each allocation's tasks through
// the node's task drivers (a registry of exec, containerd, microvm and
// mock, each with its capabilities) under the group's restart policy,
// reports task and allocation status back in batches, serves task logs
// and takes migration images over HTTP, and keeps its state in a local
// bbolt database so that a restarted agent re-attaches to running tasks
// instead of starting them again.
//
// A task runner only starts, waits, restarts and stops; every other
// concern (the lease fence, devices, shared cores, in-place resize, a
// migration's hold) is a hook at a point of the task's life, wired in one
// place (hooks.go). Live migration is package migrate, which reaches the
// runners only through small interfaces (migration.go).
//
// The agent owns actual state on the node; desired state belongs to the
// server. It must never restart or kill a task merely because it restarted
// itself or lost the server, and never be the parent of a task process: tasks
// run under detached shims (see drivers/exec) and survive the agent. It acts
// only on desired state from its own cell, never from a server behind the
// index it has acted on (cellguard.go), and at start it adopts or stops the
// tasks of its data dir it has no record of (orphans.go); see
// docs/agent-safety.md. It never holds its lock across I/O (the lock order
// is written on Agent), and Run returns only once every goroutine it or a
// driver started has ended.
//
// README.md is the manual: the component diagram, a task's life with its
// hooks and their contracts, and how the hard parts work.
package agent
