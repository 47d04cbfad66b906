// Package exec is the agent's process driver. Each task runs under a
// detached shim (`strata __shim <taskdir>`, its own session, so it outlives
// the agent) that starts `strata __exec <spec>`; exec writes its own pid into
// the task's cgroup and then execve's the task command, so the task runs
// inside its limits from its first instruction while the shim stays outside
// them. The shim copies the task's stdout and stderr into rotating log files,
// reaps it and writes exit.json atomically; the driver only watches files and
// /proc, so the agent is never the task's parent.
//
// When the task directory holds a lease fence (drivers.LeaseFile: an
// at-most-once group, or disconnect.stopAfter), the shim enforces it on
// its own (fence.go): SIGTERM at the fence's stop time, SIGKILL at its
// kill time, by the host's boot clock. So a copy stops in time even when
// the agent is frozen, killed or cut off; exit.json then says fenced.
//
// The driver owns the task's cgroup (create before start, kill and remove on
// destroy) and its cgroup parent: FindOrphans reports the tasks there, and
// the shims of its task dirs, that the agent has no record of; StopOrphan
// ends one. It must never kill a process that is not in the task's process
// group or cgroup (or an orphan's shim), and never restart a task: restarts
// are the task runner's decision.
package exec
