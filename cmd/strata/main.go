// Command strata is the one binary of a Strata cell: server, node agent,
// CLI and simulator. The commands live in internal/cli; this file only
// dispatches.
package main

import (
	"os"

	"github.com/strata-dev/strata/internal/agent"
	"github.com/strata-dev/strata/internal/cli"
)

func main() {
	// The task shim and exec stages re-run this binary; they must not go
	// through cobra (their argv is the task's, not a command line).
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "__shim":
			os.Exit(agent.ShimMain(os.Args[2:]))
		case "__exec":
			os.Exit(agent.ExecMain(os.Args[2:]))
		case "__containerd-log":
			os.Exit(agent.ContainerdLogMain(os.Args[2:]))
		case "__task":
			os.Exit(agent.TaskMain(os.Args[2:]))
		case "__microvm-shim":
			os.Exit(agent.MicroVMShimMain(os.Args[2:]))
		case "__plain":
			os.Exit(agent.PlainMain(os.Args[2:]))
		}
	}
	os.Exit(cli.Main(os.Args[1:]))
}
