package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/strata-dev/strata/api"
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
			return printListing(g, entries, []column[*api.AuditEntry]{
				{header: "TIME", cell: func(e *api.AuditEntry) string { return e.Time.Local().Format(time.RFC3339) }},
				{header: "WHO", cell: func(e *api.AuditEntry) string { return e.Who }},
				{header: "FROM", cell: func(e *api.AuditEntry) string { return e.From }},
				{header: "REQUEST", cell: func(e *api.AuditEntry) string { return e.Method + " " + e.Path }},
				{header: "STATUS", cell: func(e *api.AuditEntry) string { return fmt.Sprint(e.Status) }},
				{header: "RESULT", cell: func(e *api.AuditEntry) string {
					if e.Count > 1 { // aggregated refusals of callers who proved nothing
						return fmt.Sprintf("%s ×%d until %s", e.Result, e.Count, e.Until.Local().Format(time.TimeOnly))
					}
					return e.Result
				}},
			})
		},
	}
	cmd.Flags().StringVar(&since, "since", "", "only entries since this long ago (1h) or this time (RFC 3339)")
	cmd.Flags().StringVar(&who, "who", "", "only entries of this token accessor, token name or node id")
	addOutputFlag(cmd, g)
	return cmd
}
