package cli

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/strata-dev/strata/api"
)

func newAllocStatusCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "alloc-status ALLOC",
		Short: "Show one allocation: node, ports, tasks, health and each check's last result",
		Long: `Show one allocation in full. ALLOC is an allocation id or a unique prefix of
one (as strata allocs shows it). Health is the agent's last report: healthy
when every readiness check passes (or, without readiness checks, when every
task runs); each check shows its status, since when, and its last output.`,
		Example: `  strata alloc-status 3f2a9c1e
  strata alloc-status 3f2a9c1e -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(g); err != nil {
				return err
			}
			a, err := g.client().Allocation(cmd.Context(), args[0])
			if err != nil {
				return failf("%v", err)
			}
			if g.structured() {
				return g.printData(a)
			}
			printAllocStatus(g.stdout, a)
			return nil
		},
	}
	addOutputFlag(cmd, g)
	return cmd
}

func printAllocStatus(w io.Writer, a *api.Allocation) {
	fmt.Fprintf(w, "ID:        %s\nWorkload:  %s (version %d)\nGroup:     %s[%d]\nNode:      %s (%s)\n",
		a.ID, a.Workload, a.WorkloadVersion, a.Group, a.Index, a.NodeName, a.NodeID)
	fmt.Fprintf(w, "Desired:   %s", a.DesiredStatus)
	if a.DesiredReason != "" {
		fmt.Fprintf(w, " (%s)", a.DesiredReason)
	}
	fmt.Fprintf(w, "\nStatus:    %s", a.ClientStatus)
	if a.ClientReason != "" {
		fmt.Fprintf(w, " (%s)", a.ClientReason)
	}
	fmt.Fprintln(w)
	if len(a.Assignment.Ports) > 0 {
		var ports []string
		for _, p := range a.Assignment.Ports {
			ports = append(ports, fmt.Sprintf("%s=%d", p.Name, p.Port))
		}
		fmt.Fprintf(w, "Ports:     %s\n", strings.Join(ports, " "))
	}
	printHardware(w, &a.Assignment)
	health := "-"
	if h := a.Health; h != nil {
		health = h.Status
		if h.Reason != "" {
			health += " (" + h.Reason + ")"
		}
		if !h.Since.IsZero() {
			health += ", since " + since(h.Since)
		}
	}
	fmt.Fprintf(w, "Health:    %s\n\n", health)
	names := make([]string, 0, len(a.TaskStates))
	for n := range a.TaskStates {
		names = append(names, n)
	}
	sort.Strings(names)
	t := newTable(w, "TASK", "STATE", "PID", "EXIT", "RESTARTS", "MESSAGE")
	for _, n := range names {
		ts := a.TaskStates[n]
		msg := ts.Message
		if msg == "" {
			msg = "-"
		}
		t.row(n, ts.State, fmt.Sprint(ts.PID), fmt.Sprint(ts.ExitCode), fmt.Sprint(ts.Restarts), msg)
	}
	t.flush()
	if a.Health != nil && len(a.Health.Checks) > 0 {
		fmt.Fprintln(w)
		t := newTable(w, "CHECK", "OF", "TYPE", "PURPOSE", "STATUS", "SINCE", "LAST OUTPUT")
		for _, c := range a.Health.Checks {
			of := "task " + c.Task
			if c.Task == "" {
				of = "service " + c.Service
			}
			out := c.Output
			if out == "" {
				out = "-"
			}
			t.row(c.Name, of, c.Type, c.Purpose, c.Status, since(c.Since), out)
		}
		t.flush()
	}
}

// printChecks lists, under a workload's status, the wanted allocations
// that are not healthy with the reason, and each check's last result.
func printChecks(w io.Writer, allocs []*api.Allocation) {
	header := false
	for _, a := range sortedAllocs(allocs) {
		h := a.Health
		if a.DesiredStatus != api.DesiredRun || a.Terminal() || h == nil || (h.Status == api.HealthHealthy && len(h.Checks) == 0) {
			continue
		}
		if !header {
			fmt.Fprintln(w, "\nHealth:")
			header = true
		}
		line := fmt.Sprintf("  %s %s[%d] on %s: %s", shortID(a.ID), a.Group, a.Index, a.NodeName, h.Status)
		if h.Reason != "" {
			line += " (" + h.Reason + ")"
		}
		fmt.Fprintln(w, line)
		for _, c := range h.Checks {
			out := c.Output
			if out == "" {
				out = "-"
			}
			fmt.Fprintf(w, "    %s check %s: %s, %s\n", c.Purpose, c.Name, c.Status, out)
		}
	}
}
