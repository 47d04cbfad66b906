package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/strata-dev/strata/api"
)

func newServicesCmd(g *globals) *cobra.Command {
	var watch bool
	cmd := &cobra.Command{
		Use:   "services [NAME]",
		Short: "List services, or the healthy endpoints of one (address, port, allocation, node, tags)",
		Long: `Without NAME, list every service a workload offers (services: in its groups)
with how many of its allocations are healthy. With NAME, list the service's
endpoints: one per healthy allocation (its readiness checks pass), with the
node's address and the port the scheduler gave it. --watch prints the list
again each time it changes (a blocking query on GET /v1/services/NAME, the
same a load balancer or client library would use).`,
		Example: `  strata services
  strata services web -o json
  strata services web --watch`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(g); err != nil {
				return err
			}
			c := g.client()
			if len(args) == 0 {
				return watchEach(cmd.Context(), g, watch, func(ctx context.Context, q *api.Query) ([]api.ServiceSummary, uint64, error) {
					sums, meta, err := c.Services(ctx, q)
					return sums, meta.Index, err
				}, func(sums []api.ServiceSummary) error { return printListing(g, sums, serviceColumns) }, nil)
			}
			return watchEach(cmd.Context(), g, watch, func(ctx context.Context, q *api.Query) ([]api.ServiceEndpoint, uint64, error) {
				eps, meta, err := c.Service(ctx, args[0], q)
				return eps, meta.Index, err
			}, func(eps []api.ServiceEndpoint) error { return printListing(g, eps, endpointColumns(g)) }, nil)
		},
	}
	addWatchFlag(cmd, &watch, "services")
	addOutputFlag(cmd, g)
	return cmd
}

// serviceColumns are the columns of strata services.
var serviceColumns = []column[api.ServiceSummary]{
	{header: "SERVICE", cell: func(s api.ServiceSummary) string { return s.Name }},
	{header: "HEALTHY", cell: func(s api.ServiceSummary) string { return strconv.Itoa(s.Healthy) }},
	{header: "INSTANCES", cell: func(s api.ServiceSummary) string { return strconv.Itoa(s.Instances) }},
	{header: "WORKLOADS", cell: func(s api.ServiceSummary) string { return strings.Join(s.Workloads, ",") }},
}

// endpointColumns are the columns of strata services NAME.
func endpointColumns(g *globals) []column[api.ServiceEndpoint] {
	return []column[api.ServiceEndpoint]{
		{header: "ADDRESS", cell: func(e api.ServiceEndpoint) string {
			addr := e.Address
			if addr == "" {
				addr = "?"
			}
			return fmt.Sprintf("%s:%d", addr, e.Port)
		}},
		{header: "ALLOC", cell: func(e api.ServiceEndpoint) string { return g.id(e.AllocID) }},
		{header: "WORKLOAD", cell: func(e api.ServiceEndpoint) string { return e.Workload }},
		{header: "GROUP", cell: func(e api.ServiceEndpoint) string { return e.Group }},
		{header: "NODE", cell: func(e api.ServiceEndpoint) string { return e.NodeName }},
		{header: "TAGS", cell: func(e api.ServiceEndpoint) string { return dash(strings.Join(e.Tags, ",")) }},
		{header: "LABELS", cell: func(e api.ServiceEndpoint) string { return formatLabels(e.Labels) }},
	}
}
