package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"
)

func newAuditCmd(g *globals) *cobra.Command {
	var since, who string
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Show the audit log: every write to the API, allowed or refused",
		Long: `Show the audit log, oldest first: who (a token's accessor and name, a node, or
anonymous), what (method and path), when, from where, and the result ("ok" or
the error code of a refused or failed request). Every write is recorded, except
the agents' heartbeats and the status reports the server accepted. The cell
keeps the newest 10,000 entries, replicated like the rest of its state. With
ACLs on, reading it needs the acl-admin capability.`,
		Example: `  strata audit --since 1h
  strata audit --who ci -o json            # a token's accessor or name, or a node id`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(g); err != nil {
				return err
			}
			var from time.Time
			if since != "" {
				if d, err := time.ParseDuration(since); err == nil {
					from = time.Now().Add(-d)
				} else if t, err := time.Parse(time.RFC3339, since); err == nil {
					from = t
				} else {
					return failf("--since %q: want a duration (1h) or an RFC 3339 time", since)
				}
			}
			entries, err := g.client().Audit(cmd.Context(), from, who)
			if err != nil {
				return failf("%v", err)
			}
			if g.structured() {
				return g.printData(entries)
			}
			t := newTable(g.stdout, "TIME", "WHO", "FROM", "REQUEST", "STATUS", "RESULT")
			for _, e := range entries {
				t.row(e.Time.Local().Format(time.RFC3339), e.Who, e.From, e.Method+" "+e.Path, fmt.Sprint(e.Status), e.Result)
			}
			return t.flush()
		},
	}
	cmd.Flags().StringVar(&since, "since", "", "only entries since this long ago (1h) or this time (RFC 3339)")
	cmd.Flags().StringVar(&who, "who", "", "only entries of this token accessor, token name or node id")
	addOutputFlag(cmd, g)
	return cmd
}
