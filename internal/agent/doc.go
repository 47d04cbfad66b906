// Package agent is Strata's node agent: it fingerprints the machine,
// registers it with the control plane and heartbeats, watches the node's
// allocations with blocking queries, runs each allocation's tasks through a
// task driver (exec, mock) under the group's restart policy, reports task
// and allocation status back in batches, serves task logs over HTTP, and
// keeps its state in a local bbolt database so that a restarted agent
// re-attaches to running tasks instead of starting them again.
//
// The agent owns actual state on the node; desired state belongs to the
// server. It must never restart or kill a task merely because it restarted
// itself or lost the server, and never be the parent of a task process: tasks
// run under detached shims (see drivers/exec) and survive the agent. It acts
// only on desired state from its own cell, never from a server behind the
// index it has acted on (cellguard.go), and at start it adopts or stops the
// tasks of its data dir it has no record of (orphans.go); see
// docs/agent-safety.md.
// See README.md for the component diagram.
package agent
