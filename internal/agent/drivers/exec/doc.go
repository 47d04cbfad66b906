// Package exec is the agent's process driver. Each task runs under a
// detached shim (`strata __shim <taskdir>`, its own session, so it outlives
// the agent) that starts `strata __exec <spec>` as the init of new pid,
// mount, uts and ipc namespaces and its own session. The init hides every
// other task's files and the host's /tmp, shows the task only its own
// cgroups (read-only) and a fresh /proc, joins the task's cgroups and a
// cgroup namespace rooted there, forwards stop signals to every process of
// the namespace and reports the task's status. It starts `strata __task`,
// which inherits all of that, becomes the task's user (nobody
// by default; root only when Config.AllowRootTasks), keeps only the
// capability allow-list, sets no_new_privs, loads the default seccomp
// profile and execve's the command: the task runs inside its limits and
// confinement from its first instruction. The shim copies the task's stdout
// and stderr into rotating log files, reaps the init and writes exit.json
// atomically; the driver only watches files and /proc, so the agent is never
// the task's parent. docs/security.md ("Task isolation") is the manual.
//
// criu checkpoints that tree whole, under its init, with its namespaces
// (checkpoint.go, nslayout.go: which mounts are the host's, and so
// external, and which the init's); docs/migration.md ("Namespaced tasks").
//
// When the task directory holds a lease fence (drivers.LeaseFile: an
// at-most-once group, or disconnect.stopAfter), the shim enforces it on
// its own (fence.go): SIGTERM at the fence's stop time, SIGKILL at its
// kill time, by the host's boot clock. So a copy stops in time even when
// the agent is frozen, killed or cut off; exit.json then says fenced.
//
// The driver owns the task's cgroup (create before start, kill and remove on
// destroy), its cgroup parent and the task directory's layout (root's 0700
// directory with the driver's files and logs; local/, the task's own).
// FindOrphans reports the tasks under the parent, and the shims of its task
// dirs, that the agent has no record of; StopOrphan ends one. It must never
// kill a process that is not in the task's namespace or cgroup (or an
// orphan's shim), and never restart a task: restarts are the task runner's
// decision.
package exec
