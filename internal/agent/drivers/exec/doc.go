// Package exec is the agent's process driver. Each task runs under a
// detached shim (`strata __shim <taskdir>`, its own session, so it outlives
// the agent) that starts `strata __exec <spec>` as the init of new pid,
// mount, uts and ipc namespaces. The init hides every other task's files
// and the host's /tmp, shows the task only its own cgroups (read-only) and a
// fresh /proc, forwards stop signals to every process of the namespace and
// reports the task's status. It starts `strata __task`, which joins the
// task's cgroups, enters a cgroup namespace, becomes the task's user (nobody
// by default; root only when Config.AllowRootTasks), keeps only the
// capability allow-list, sets no_new_privs, loads the default seccomp
// profile and execve's the command: the task runs inside its limits and
// confinement from its first instruction. The shim copies the task's stdout
// and stderr into rotating log files, reaps the init and writes exit.json
// atomically; the driver only watches files and /proc, so the agent is never
// the task's parent. docs/security.md ("Task isolation") is the manual.
//
// The driver owns the task's cgroup (create before start, kill and remove on
// destroy) and the task directory's layout (root's 0700 directory with the
// driver's files and logs; local/, the task's own). It must never kill a
// process that is not in the task's namespace or cgroup, and never restart
// a task: restarts are the task runner's decision.
package exec
