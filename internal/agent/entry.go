package agent

import (
	"github.com/strata-dev/strata/internal/agent/drivers/containerd"
	"github.com/strata-dev/strata/internal/agent/drivers/exec"
	"github.com/strata-dev/strata/internal/agent/drivers/microvm"
)

// ShimMain is the body of `strata __shim <taskdir>`; args are the arguments
// after "__shim". It returns the process exit status.
func ShimMain(args []string) int { return exec.ShimMain(args) }

// ExecMain is the body of `strata __exec <spec>`; args are the arguments
// after "__exec". It returns only when the task command could not be run.
func ExecMain(args []string) int { return exec.ExecMain(args) }

// ContainerdLogMain is the body of `strata __containerd-log <taskdir>`, the
// logging process containerd's shim starts for a container task.
func ContainerdLogMain(args []string) int { return containerd.LogMain(args) }

// TaskMain is the body of `strata __task`, the task's last stage before
// its command (it reads its spec from a pipe, not from args).
func TaskMain(args []string) int { return exec.TaskMain(args) }

// MicroVMShimMain is the body of `strata __microvm-shim <taskdir>`, the
// process that owns a micro-VM task's qemu.
func MicroVMShimMain(args []string) int { return microvm.ShimMain(args) }

// PlainMain is the body of `strata __plain <spec>`, the one stage of a
// task without namespaces (--checkpointable-tasks), and of every restore.
func PlainMain(args []string) int { return exec.PlainMain(args) }
