// Package drivers is what the agent's task runners and the task drivers
// (exec, containerd, microvm, mock) share.
//
//   - The contracts: Driver, every driver's methods, and the optional
//     capabilities a driver may have (Checkpointer, Labeler, Resizer,
//     OrphanFinder, Runner, Closer), each with what it may do and when.
//   - The registry: a Registration per driver (name, what it requires of
//     the node, an init that starts nothing), loaded into a Set that
//     finds each driver's capabilities once; the agent asks the Set,
//     never a driver value, what a driver can do.
//   - The one task table every driver keeps its tasks in (Table: lookups
//     that name ErrTaskNotFound, each exit published once, the driver's
//     goroutines tracked and ended by Close).
//   - Plain data: what to start (TaskConfig), what is persisted to find a
//     running task again after an agent restart (TaskHandle), how a task
//     ended (ExitResult); and the rules every driver applies the same
//     way: the root policy (CheckRoot), the lease fence (FenceWatch,
//     FenceBeforeStart), private scratch directories (ScratchDirs).
//
// It must never import the agent or a driver implementation, and never
// start a process: the drivers do, under these contracts.
package drivers
