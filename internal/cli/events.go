package cli

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/strata-dev/strata/api"
)

func newEventsCmd(g *globals) *cobra.Command {
	var workload string
	var follow bool
	cmd := &cobra.Command{
		Use:   "events",
		Short: "Show the cell's recent history: placements, stops, preemptions, failures, node changes",
		Example: `  strata events
  strata events --workload hello -f
  strata events -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(g); err != nil {
				return err
			}
			c := g.client()
			var index uint64
			seen := ""
			for {
				q := (*api.Query)(nil)
				if index > 0 {
					q = &api.Query{Index: index, Wait: 30 * time.Second}
				}
				events, meta, err := c.Events(cmd.Context(), workload, q)
				if err != nil {
					if cmd.Context().Err() != nil {
						return nil
					}
					return failf("%v", err)
				}
				var fresh []*api.Event
				for _, e := range events {
					if e.ID > seen {
						fresh = append(fresh, e)
					}
				}
				if len(fresh) > 0 {
					seen = fresh[len(fresh)-1].ID
				}
				if g.json() {
					if err := printJSON(g.stdout, fresh); err != nil {
						return err
					}
				} else {
					t := newTable(g.stdout) // no header again while following
					if index == 0 {
						t = newTable(g.stdout, "TIME", "TYPE", "WORKLOAD", "MESSAGE")
					}
					for _, e := range fresh {
						w := e.Workload
						if w == "" {
							w = "-"
						}
						t.row(e.Time.Format(time.DateTime), e.Type, w, e.Message)
					}
					t.flush()
				}
				if !follow {
					return nil
				}
				index = meta.Index
			}
		},
	}
	cmd.Flags().StringVar(&workload, "workload", "", "only events of this workload")
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing new events")
	addOutputFlag(cmd, g)
	return cmd
}
