// Package migrate moves a running allocation between nodes, and
// checkpoints it in place, with its tasks' memory (criu through the
// drivers' Checkpointer) or, where that cannot be, by stop and restart
// (docs/migration.md).
//
// It owns the protocol of a move on both of its nodes: the source dumps
// the tasks (Migrator.Move), streams the image to the target's agent
// (ImageTransport: mutual TLS between agent certificates), and lets the
// servers arbitrate between its abort and the target's commit; the target
// (Migrator.Receive) checks the offer with the servers, restores the
// tasks stopped, asks for the commit and resumes them only once it is
// applied. A task whose exit a migration causes is held (Holds, an exited
// hook of the agent's task runner) until the migration's verdict. Where
// images live while the tasks are stopped is Images.
//
// It reaches the agent only through Alloc, Task and Runners, what an
// allocation's and a task's runner expose to it, and the control plane
// through API. It must never run a task in two places: a task on the
// source stays held (stopped) while the outcome is unknown, and a target
// resumes nothing the servers did not commit. It never talks to a driver
// that lacks the Checkpointer capability as if it had it.
package migrate
