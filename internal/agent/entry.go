package agent

import "github.com/strata-dev/strata/internal/agent/drivers/exec"

// ShimMain is the body of `strata __shim <taskdir>`; args are the arguments
// after "__shim". It returns the process exit status.
func ShimMain(args []string) int { return exec.ShimMain(args) }

// ExecMain is the body of `strata __exec <spec>`; args are the arguments
// after "__exec". It returns only when the task command could not be run.
func ExecMain(args []string) int { return exec.ExecMain(args) }

// TaskMain is the body of `strata __task`, the task's last stage before
// its command (it reads its spec from a pipe, not from args).
func TaskMain(args []string) int { return exec.TaskMain(args) }

// PlainMain is the body of `strata __plain <spec>`, the one stage of a
// checkpointable task (--checkpointable-tasks).
func PlainMain(args []string) int { return exec.PlainMain(args) }
