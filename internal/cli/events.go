package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/noderef"
	"github.com/strata-dev/strata/internal/suggest"
)

// eventFilter keeps the events strata events was asked for.
type eventFilter struct {
	types        map[string]bool // empty: every type
	nodeID       string
	incident     string
	since, until time.Time
}

func (f eventFilter) keep(e *api.Event) bool {
	return (len(f.types) == 0 || f.types[e.Type]) && (f.nodeID == "" || e.NodeID == f.nodeID) &&
		(f.incident == "" || e.Incident == f.incident) &&
		(f.since.IsZero() || !e.Time.Before(f.since)) && (f.until.IsZero() || e.Time.Before(f.until))
}

// parseEventTypes reads --type: a comma-separated list of types. A type
// this binary does not know is refused when it is close to one it knows (a
// typo); one unlike any is kept, with a warning: a newer server may have
// types an older CLI does not (during an upgrade).
func parseEventTypes(list []string, warn io.Writer) (map[string]bool, error) {
	out := map[string]bool{}
	for _, item := range list {
		for _, t := range strings.Split(item, ",") {
			t = strings.TrimSpace(t)
			if t == "" {
				continue
			}
			if !slices.Contains(api.EventTypes, t) {
				if hint := suggest.DidYouMean(t, api.EventTypes); hint != "" {
					return nil, failf("--type %q: unknown event type%s (strata events --help lists them)", t, hint)
				}
				fmt.Fprintf(warn, "warning: --type %q is not an event type this strata knows (strata events --help lists them); filtering by it anyway\n", t)
			}
			out[t] = true
		}
	}
	return out, nil
}

// parseEventTime reads --since and --until: a duration back from now
// (30m, 2h) or a time (RFC 3339, or 2006-01-02 15:04:05 in UTC).
func parseEventTime(flag, s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	for _, layout := range []string{time.RFC3339Nano, time.DateTime, time.DateOnly} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, failf("--%s %q: want a duration back from now (30m, 2h) or a time (2026-01-02T15:04:05Z, 2026-01-02 15:04:05, 2026-01-02; UTC)", flag, s)
}

func newEventsCmd(g *globals) *cobra.Command {
	var workload, node, incidentID, since, until string
	var types []string
	var follow bool
	cmd := &cobra.Command{
		Use:   "events",
		Short: "Show the cell's recent history: placements, stops, preemptions, failures, node changes",
		Long: `Show the cell's recent history, oldest first; -f keeps printing new events.
Filters combine: --workload, --type (comma-separated or repeated), --node (its
id, a unique prefix of it, or its name) and a time window, --since and
--until, each a duration back from now (30m, 2h) or a time (RFC 3339 or
"2026-01-02 15:04:05", UTC).

Types: ` + strings.Join(api.EventTypes, ", ") + `.`,
		Example: `  strata events
  strata events --workload hello -f
  strata events --type node-down,node-ready --since 2h
  strata events --node n7 --type placed,stopped -o wide
  strata events --incident 20250105T120000-rack-r3
  strata events --since "2026-01-02 09:00:00" --until "2026-01-02 10:00:00" -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(g); err != nil {
				return err
			}
			f := eventFilter{incident: incidentID}
			var err error
			if f.types, err = parseEventTypes(types, g.stderr); err != nil {
				return err
			}
			now := time.Now()
			if f.since, err = parseEventTime("since", since, now); err != nil {
				return err
			}
			if f.until, err = parseEventTime("until", until, now); err != nil {
				return err
			}
			c := g.client()
			if node != "" {
				if f.nodeID, err = resolveNodeRef(cmd.Context(), c, node); err != nil {
					return err
				}
			}
			return followEvents(cmd.Context(), g, c, workload, f, follow)
		},
	}
	cmd.Flags().StringVar(&workload, "workload", "", "only events of this workload")
	cmd.Flags().StringSliceVar(&types, "type", nil, "only events of these types (comma-separated or repeated)")
	cmd.Flags().StringVar(&node, "node", "", "only events of this node (id, unique id prefix or name)")
	cmd.Flags().StringVar(&incidentID, "incident", "", "only events of this incident (strata incidents lists them)")
	cmd.Flags().StringVar(&since, "since", "", "only events at or after this time (a duration back from now, or a time)")
	cmd.Flags().StringVar(&until, "until", "", "only events before this time (a duration back from now, or a time)")
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing new events")
	cmd.RegisterFlagCompletionFunc("type", cobra.FixedCompletions(api.EventTypes, cobra.ShellCompDirectiveNoFileComp))
	cmd.RegisterFlagCompletionFunc("node", completeNodeFlag(g))
	cmd.RegisterFlagCompletionFunc("workload", func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return askCell(g, toComplete, workloadNames)
	})
	addOutputFlag(cmd, g)
	return cmd
}

// resolveNodeRef turns what the user typed into a node id, through the
// node listing (internal/noderef): an ambiguous name is refused with the
// candidates.
func resolveNodeRef(ctx context.Context, c *api.Client, ref string) (string, error) {
	nodes, _, err := c.Nodes(ctx, nil)
	if err != nil {
		return "", failf("--node: %v", err)
	}
	n, err := noderef.Resolve(nodes, ref)
	if err != nil {
		return "", failf("--node: %v", err)
	}
	return n.ID, nil
}

// followEvents prints the events f keeps, and with follow keeps printing
// new ones as they come.
func followEvents(ctx context.Context, g *globals, c *api.Client, workload string, f eventFilter, follow bool) error {
	var index uint64
	seen := ""
	for {
		q := (*api.Query)(nil)
		if index > 0 {
			q = &api.Query{Index: index, Wait: 30 * time.Second}
		}
		events, meta, err := c.Events(ctx, workload, q)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return failf("%v", err)
		}
		var fresh []*api.Event
		for _, e := range events {
			if e.ID > seen {
				seen = e.ID
				if f.keep(e) {
					fresh = append(fresh, e)
				}
			}
		}
		if g.structured() {
			if err := g.printData(fresh); err != nil {
				return err
			}
		} else if index == 0 || len(fresh) > 0 {
			printEvents(g, fresh, index == 0)
		}
		if !follow {
			return nil
		}
		index = meta.Index
	}
}

// printEvents writes events as a table; the header only the first time
// (a follow goes on under it).
func printEvents(g *globals, events []*api.Event, header bool) {
	cols := []column[*api.Event]{
		{header: "TIME", cell: func(e *api.Event) string { return e.Time.Format(time.DateTime) }},
		{header: "TYPE", cell: func(e *api.Event) string { return e.Type }},
		{header: "WORKLOAD", cell: func(e *api.Event) string { return dash(e.Workload) }},
		{header: "NODE", wide: true, cell: func(e *api.Event) string { return dash(g.id(e.NodeID)) }},
		{header: "ALLOC", wide: true, cell: func(e *api.Event) string { return dash(g.id(e.AllocID)) }},
		{header: "INDEX", wide: true, cell: func(e *api.Event) string { return fmt.Sprint(e.Index) }},
		{header: "INCIDENT", wide: true, cell: func(e *api.Event) string { return dash(e.Incident) }},
		{header: "MESSAGE", cell: func(e *api.Event) string { return e.Message }},
	}
	if !header {
		for i := range cols {
			cols[i].header = ""
		}
	}
	printListing(g, events, cols)
}
