package cli

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/strata-dev/strata/api"
)

func newIncidentsCmd(g *globals) *cobra.Command {
	var status string
	cmd := &cobra.Command{
		Use:   "incidents [--status open|closed]",
		Short: "List the cell's incidents: trouble grouped by what it shares, with its probable cause",
		Long: `List the incidents the leader correlated from the cell's trouble: allocations that
failed, were OOM-killed, restarted, failed health checks or were lost, nodes that went
down, groups slow to place — grouped by what they share (a node, a rack, a switch, a
power zone, a workload version, a deployment, a driver) when that is improbable by
chance, with the shared thing as the probable cause:

  12 allocations on 3 nodes of rack r7 failed within 40 s: rack r7

Open incidents come first, newest first, then the closed ones the leader keeps.
'strata incident ID' shows one with its evidence; 'strata events --incident ID' its
events. Incidents are the leader's (a new leader derives them again from the events),
and reading them needs the cell's read capability: they span namespaces.
docs/incidents.md explains the statistics.`,
		Example: `  strata incidents
  strata incidents --status open -o wide
  strata incidents -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(g); err != nil {
				return err
			}
			if status != "" && status != api.IncidentOpen && status != api.IncidentClosed {
				return failf("--status: want %s or %s, got %q", api.IncidentOpen, api.IncidentClosed, status)
			}
			list, err := g.client().Incidents(cmd.Context(), status)
			if err != nil {
				return err
			}
			return printListing(g, list, incidentColumns())
		},
	}
	cmd.Flags().StringVar(&status, "status", "", "only open or only closed incidents")
	addOutputFlag(cmd, g)
	return cmd
}

func incidentColumns() []column[*api.Incident] {
	return []column[*api.Incident]{
		{header: "ID", cell: func(in *api.Incident) string { return in.ID }},
		{header: "STATUS", cell: func(in *api.Incident) string { return in.Status }},
		{header: "BEGAN", cell: func(in *api.Incident) string { return in.Began.Format(time.DateTime) }},
		{header: "LAST", wide: true, cell: func(in *api.Incident) string { return in.Last.Format(time.DateTime) }},
		{header: "CAUSE", wide: true, cell: func(in *api.Incident) string { return in.Cause.Noun + " " + in.Cause.Value }},
		{header: "P", wide: true, cell: func(in *api.Incident) string { return in.Cause.P }},
		{header: "SUMMARY", cell: func(in *api.Incident) string { return in.Summary }},
	}
}

func newIncidentCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "incident ID",
		Short: "Show one incident: its cause and the evidence for it, the alternatives, its history",
		Example: `  strata incident 20250105T120000-rack-r3
  strata incident 20250105T120000-rack-r3 -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(g); err != nil {
				return err
			}
			in, err := g.client().Incident(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if g.structured() {
				return g.printData(in)
			}
			return writeIncident(g, in)
		},
	}
	addOutputFlag(cmd, g)
	return cmd
}

func writeIncident(g *globals, in *api.Incident) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s)\n%s\n\n", in.ID, in.Status, in.Summary)
	fmt.Fprintf(&b, "cause:   %s %s: %s\n", in.Cause.Noun, in.Cause.Value, in.Cause.Evidence)
	for _, a := range in.Alternatives {
		fmt.Fprintf(&b, "also:    %s %s: %s\n", a.Noun, a.Value, a.Evidence)
	}
	when := in.Began.Format(time.DateTime) + " .. " + in.Last.Format(time.DateTime)
	if !in.Closed.IsZero() {
		when += ", closed " + in.Closed.Format(time.DateTime)
	}
	fmt.Fprintf(&b, "when:    %s\n", when)
	var kinds []string
	for _, k := range slices.Sorted(maps.Keys(in.Kinds)) {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, in.Kinds[k]))
	}
	fmt.Fprintf(&b, "signals: %d (%s); %d allocations, %d nodes, %d workloads\n", in.Signals, strings.Join(kinds, ", "), in.Allocations, in.Nodes, in.Workloads)
	if in.MergedInto != "" {
		fmt.Fprintf(&b, "merged into %s\n", in.MergedInto)
	}
	for _, h := range in.History {
		fmt.Fprintf(&b, "  - %s\n", h)
	}
	if len(in.Events) > 0 {
		fmt.Fprintf(&b, "events:  strata events --incident %s\n", in.ID)
	}
	_, err := fmt.Fprint(g.stdout, b.String())
	return err
}
