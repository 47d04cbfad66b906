package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/strata-dev/strata/internal/version"
)

func newVersionCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print this binary's version, commit and API version",
		Long: `Print which Strata this binary is: its version, the git commit it was built
from (+modified when the tree had uncommitted changes), the commit's time, the
API version it speaks, and the Go toolchain and platform. During a rolling
upgrade, run it on each machine to see which binary each has.`,
		Example: "  strata version\n  strata version -o json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(g); err != nil {
				return err
			}
			info := version.Get()
			if g.structured() {
				return g.printData(info)
			}
			fmt.Fprintln(g.stdout, info)
			return nil
		},
	}
	addOutputFlag(cmd, g)
	return cmd
}
