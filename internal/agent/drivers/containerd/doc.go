// Package containerd is the task driver for OCI images: it asks a containerd
// daemon (1.6 or later, over its socket) to pull or import a task's image,
// create a container whose OCI spec carries the task's limits (cpu quota,
// memory, pids, cpuset, devices) and run it under containerd's runc shim.
//
// The agent is never the container's parent: the shim is containerd's, the
// task's stdout and stderr go to a logging process the shim starts (this
// binary again, `strata __containerd-log`, see LogMain) that writes the task
// directory's rotating log files, and the exit status waits in containerd
// until the driver deletes the task. A new agent process therefore
// re-attaches by container id (RecoverTask) without restarting anything.
//
// The driver owns one containerd namespace (default "strata"): it creates,
// and on DestroyTask deletes, containers there, and its image collector
// (gc.go) removes images it pulled or imported once no container has used
// them for a grace period. It must never touch another namespace.
package containerd
