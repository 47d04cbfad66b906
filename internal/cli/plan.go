package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/spec"
)

func newPlanCmd(g *globals) *cobra.Command {
	var file workloadFile
	cmd := &cobra.Command{
		Use:   "plan [-f] FILE [--var NAME=VALUE]...",
		Short: "Dry run: what registering a workload file would change and what the scheduler would do",
		Long: `Show, without changing anything, the difference between a Workload file and the
running version (each field, marked when it replaces allocations rather than
changing them in place) and what the scheduler would do now: placements,
allocations updated in place, stops, preemptions of other workloads, and what
could not be placed with the scheduler's reasons. A destructive update is shown
with the rolling update it would start.

It prints the workload's index: 'strata run -f FILE --check-index N' registers the
file only if the workload has not changed since, so what runs is what was planned.
Exit code 0 when everything fits, 1 when something would not be placed.`,
		Example: `  strata plan -f web.yaml
  strata run -f web.yaml --check-index 1234`,
		Args: fileArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(g); err != nil {
				return err
			}
			doc, err := file.read(args)
			if err != nil {
				return err
			}
			if _, err := spec.Parse(doc); err != nil {
				return invalidWorkload(file.name(), err)
			}
			resp, err := g.client().PlanWorkload(cmd.Context(), doc)
			if err != nil {
				return failf("plan %s: %v", file.name(), err)
			}
			if g.structured() {
				if err := g.printData(resp); err != nil {
					return err
				}
			} else {
				printPlan(g.stdout, resp, file.name())
			}
			if len(resp.Failures) > 0 {
				return &exitError{code: 1, err: fmt.Errorf("some replicas would not be placed")}
			}
			return nil
		},
	}
	file.register(cmd)
	addOutputFlag(cmd, g)
	return cmd
}

func printPlan(w io.Writer, p *api.PlanResponse, file string) {
	fmt.Fprintf(w, "workload %q\n", p.Workload)
	if len(p.Diff) == 0 {
		fmt.Fprintln(w, "  no change")
	}
	for _, d := range p.Diff {
		kind := "in place"
		if d.Destructive {
			kind = "replaces allocations"
		}
		switch {
		case d.Old == "":
			fmt.Fprintf(w, "  + %s: %s\n", d.Path, d.New)
		case d.New == "":
			fmt.Fprintf(w, "  - %s: %s (%s)\n", d.Path, d.Old, kind)
		default:
			fmt.Fprintf(w, "  ~ %s: %s => %s (%s)\n", d.Path, d.Old, d.New, kind)
		}
	}
	fmt.Fprintln(w, "\nscheduler:")
	t := newTable(w, "  GROUP", "PLACE", "IN PLACE", "STOP", "PREEMPT", "UPDATE")
	for _, g := range p.Groups {
		t.row("  "+g.Name, itoa(g.Place), itoa(g.InPlace), itoa(g.Stop), itoa(g.Preempt), dash(g.Rolling))
	}
	t.flush()
	for _, s := range p.Stops {
		fmt.Fprintf(w, "  stop %s (%s on %s): %s\n", shortID(s.AllocID), s.Group, s.NodeID, s.Reason)
	}
	for _, s := range p.Preempted {
		fmt.Fprintf(w, "  preempt %s of %s/%s on %s\n", shortID(s.AllocID), s.Workload, s.Group, s.NodeID)
	}
	for _, f := range p.Failures {
		fmt.Fprintf(w, "  cannot place %d of %s: %s\n", f.Missing, f.Group, f.Summary)
	}
	if p.Deployment != nil {
		var names []string
		for _, g := range p.Deployment.Groups {
			names = append(names, g.Name)
		}
		fmt.Fprintf(w, "  starts a deployment of group(s) %s: old copies stop only once their replacements are healthy\n", strings.Join(names, ", "))
	}
	fmt.Fprintf(w, "\nindex %d: strata run -f %s --check-index %d\n", p.CheckIndex, file, p.CheckIndex)
}

func itoa(i int) string { return fmt.Sprint(i) }
