package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

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
			var index uint64
			for {
				q := &api.Query{}
				if watch && index > 0 {
					q = &api.Query{Index: index, Wait: 5 * time.Minute}
				}
				var out any
				var meta api.QueryMeta
				var err error
				if len(args) == 0 {
					var sums []api.ServiceSummary
					sums, meta, err = c.Services(cmd.Context(), q)
					out = sums
					if err == nil && !g.structured() && (!watch || meta.Index != index) {
						err = printServices(g.stdout, sums)
					}
				} else {
					var eps []api.ServiceEndpoint
					eps, meta, err = c.Service(cmd.Context(), args[0], q)
					out = eps
					if err == nil && !g.structured() && (!watch || meta.Index != index) {
						err = printEndpoints(g.stdout, eps)
					}
				}
				if err != nil {
					if watch && errors.Is(cmd.Context().Err(), context.Canceled) {
						return nil
					}
					return failf("%v", err)
				}
				if g.structured() && (!watch || meta.Index != index) {
					if err := g.printData(out); err != nil {
						return err
					}
				}
				if !watch {
					return nil
				}
				index = meta.Index
			}
		},
	}
	cmd.Flags().BoolVarP(&watch, "watch", "w", false, "print again on every change (Ctrl-C to end)")
	addOutputFlag(cmd, g)
	return cmd
}

func printServices(w io.Writer, sums []api.ServiceSummary) error {
	t := newTable(w, "SERVICE", "HEALTHY", "INSTANCES", "WORKLOADS")
	for _, s := range sums {
		t.row(s.Name, strconv.Itoa(s.Healthy), strconv.Itoa(s.Instances), strings.Join(s.Workloads, ","))
	}
	return t.flush()
}

func printEndpoints(w io.Writer, eps []api.ServiceEndpoint) error {
	t := newTable(w, "ADDRESS", "ALLOC", "WORKLOAD", "GROUP", "NODE", "TAGS", "LABELS")
	for _, e := range eps {
		tags := strings.Join(e.Tags, ",")
		if tags == "" {
			tags = "-"
		}
		addr := e.Address
		if addr == "" {
			addr = "?"
		}
		t.row(fmt.Sprintf("%s:%d", addr, e.Port), shortID(e.AllocID), e.Workload, e.Group, e.NodeName, tags, formatLabels(e.Labels))
	}
	return t.flush()
}
