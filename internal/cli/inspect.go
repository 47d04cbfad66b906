package cli

import (
	"time"

	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/strata-dev/strata/api"
)

func newStatusCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "status [NAME]",
		Short: "Show workloads, or one workload with per-group counts and the reasons for what is pending",
		Example: `  strata status
  strata status hello -o json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(g); err != nil {
				return err
			}
			c := g.client()
			if len(args) == 0 {
				list, _, err := c.Workloads(cmd.Context(), nil)
				if err != nil {
					return failf("%v", err)
				}
				if g.json() {
					return printJSON(g.stdout, list)
				}
				t := newTable(g.stdout, "NAME", "STATUS", "PRIORITY", "VERSION", "DESIRED", "RUNNING", "PENDING", "FAILED")
				for _, w := range list {
					t.row(w.Name, w.Status, fmt.Sprintf("%s/%d", w.PriorityClass, w.Priority), strconv.FormatUint(w.Version, 10),
						strconv.Itoa(w.Desired), strconv.Itoa(w.Running), strconv.Itoa(w.Pending), strconv.Itoa(w.Failed))
				}
				return t.flush()
			}
			st, _, err := c.WorkloadStatus(cmd.Context(), args[0], nil)
			if err != nil {
				return failf("%v", err)
			}
			if g.json() {
				return printJSON(g.stdout, st)
			}
			if err := printWorkloadStatus(g.stdout, st); err != nil {
				return err
			}
			// What starting tasks are doing (an image pull's progress) and
			// each check's last result are the agents' news: they come with
			// the allocations.
			allocs, _, err := c.Allocations(cmd.Context(), args[0], nil)
			if err != nil {
				return failf("%v", err)
			}
			printStartingTasks(g.stdout, allocs)
			printChecks(g.stdout, allocs)
			return nil
		},
	}
	addOutputFlag(cmd, g)
	return cmd
}

func printWorkloadStatus(w io.Writer, st *api.WorkloadStatus) error {
	wl := st.Workload
	policy := wl.SchedulingPolicy.Type
	if policy == "" {
		policy = "the cell's default"
	}
	fmt.Fprintf(w, "Name:      %s\nStatus:    %s\nVersion:   %d\nPriority:  %s (%d)\nPolicy:    %s\n",
		wl.Name, st.Status, wl.Version, wl.PriorityClass, wl.Priority, policy)
	fmt.Fprintln(w)
	t := newTable(w, "GROUP", "DESIRED", "PENDING", "RUNNING", "HEALTHY", "COMPLETE", "FAILED", "LOST", "PREEMPTED")
	for _, g := range st.Groups {
		t.row(g.Name, strconv.Itoa(g.Desired), strconv.Itoa(g.Pending), strconv.Itoa(g.Running), strconv.Itoa(g.Healthy),
			strconv.Itoa(g.Complete), strconv.Itoa(g.Failed), strconv.Itoa(g.Lost), strconv.Itoa(g.Preempted))
	}
	t.flush()
	for _, g := range st.Groups {
		if g.Dead > 0 {
			fmt.Fprintf(w, "\nGroup %q: %d dead, not replaced: %s\n", g.Name, g.Dead, g.DeadReason)
		}
		if f := g.Failure; f != nil {
			fmt.Fprintf(w, "\nGroup %q: %d not placed (%d nodes evaluated): %s\n", g.Name, f.Missing, f.NodesEvaluated, f.Summary)
		}
		if e := g.Explanation; e != nil {
			printExplanation(w, g.Name, g.ExplainedBy, e)
		}
	}
	if e := st.LatestEval; e != nil {
		fmt.Fprintf(w, "\nLatest evaluation: %s %s (%s)", shortID(e.ID), e.Status, e.TriggeredBy)
		if e.StatusDescription != "" {
			fmt.Fprintf(w, ": %s", e.StatusDescription)
		}
		fmt.Fprintln(w)
	}
	if e := st.NextEval; e != nil {
		fmt.Fprintf(w, "Next evaluation:   %s at %s (%s)\n", shortID(e.ID), e.WaitUntil.Format(time.RFC3339), e.TriggeredBy)
	}
	if len(st.Unenforced) > 0 {
		fmt.Fprintln(w, "\nAccepted, not yet enforced:")
		for _, n := range st.Unenforced {
			fmt.Fprintf(w, "  %s = %q: %s\n", n.Field, n.Value, n.Message)
		}
	}
	return nil
}

func newAllocsCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "allocs [WORKLOAD]",
		Short: "List allocations: node, desired and actual state, and each task's pid, exit code and restarts",
		Example: `  strata allocs
  strata allocs hello -o json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(g); err != nil {
				return err
			}
			name := ""
			if len(args) == 1 {
				name = args[0]
			}
			allocs, _, err := g.client().Allocations(cmd.Context(), name, nil)
			if err != nil {
				return failf("%v", err)
			}
			if g.json() {
				return printJSON(g.stdout, allocs)
			}
			t := newTable(g.stdout, "ID", "WORKLOAD", "GROUP", "NODE", "DESIRED", "STATUS", "HEALTH", "TASKS", "REASON")
			for _, a := range allocs {
				reason := a.ClientReason
				switch {
				case reason == "":
					reason = a.DesiredReason
				case a.ClientStatus == api.AllocFailed && a.DesiredStatus == api.DesiredStop && a.DesiredReason != "":
					reason += "; not replaced: " + a.DesiredReason
				}
				if reason == "" {
					reason = "-"
				}
				health := "-"
				if a.Health != nil {
					health = a.Health.Status
				}
				t.row(shortID(a.ID), a.Workload, fmt.Sprintf("%s[%d]", a.Group, a.Index), a.NodeName, a.DesiredStatus, a.ClientStatus, health, taskSummary(a), reason)
			}
			return t.flush()
		},
	}
	addOutputFlag(cmd, g)
	return cmd
}

// taskSummary renders each task as name:state(pid=…,exit=…,restarts=…).
func taskSummary(a *api.Allocation) string {
	if len(a.TaskStates) == 0 {
		return "-"
	}
	names := make([]string, 0, len(a.TaskStates))
	for n := range a.TaskStates {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, 0, len(names))
	for _, n := range names {
		ts := a.TaskStates[n]
		var attrs []string
		if ts.PID > 0 && ts.State == api.TaskRunning {
			attrs = append(attrs, "pid="+strconv.Itoa(ts.PID))
		}
		if ts.State == api.TaskDead {
			attrs = append(attrs, "exit="+strconv.Itoa(ts.ExitCode))
		}
		if ts.OOMKilled {
			attrs = append(attrs, "oom")
		}
		attrs = append(attrs, "restarts="+strconv.Itoa(ts.Restarts))
		parts = append(parts, fmt.Sprintf("%s:%s(%s)", n, ts.State, strings.Join(attrs, ",")))
	}
	return strings.Join(parts, " ")
}

func newLogsCmd(g *globals) *cobra.Command {
	var follow, stderr bool
	cmd := &cobra.Command{
		Use:   "logs ALLOC [TASK]",
		Short: "Print a task's stdout (or --stderr); -f follows",
		Long: `Print a task's log. ALLOC is an allocation id or a unique prefix of one (as
strata allocs shows it); TASK defaults to the group's first task.`,
		Example: `  strata logs 3f2a9c1e
  strata logs 3f2a9c1e server -f --stderr`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts := api.LogOptions{Stderr: stderr, Follow: follow}
			if len(args) == 2 {
				opts.Task = args[1]
			}
			rc, err := g.client().Logs(cmd.Context(), args[0], opts)
			if err != nil {
				return failf("%v", err)
			}
			defer rc.Close()
			if _, err := io.Copy(g.stdout, rc); err != nil && cmd.Context().Err() == nil {
				return failf("reading logs: %v", err)
			}
			return nil
		},
	}
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing new output")
	cmd.Flags().BoolVar(&stderr, "stderr", false, "print stderr instead of stdout")
	return cmd
}

func newStopCmd(g *globals) *cobra.Command {
	var purge bool
	cmd := &cobra.Command{
		Use:     "stop NAME",
		Short:   "Stop a workload's allocations (SIGTERM, then SIGKILL after the task's killTimeout); --purge also removes it",
		Example: "  strata stop hello\n  strata stop hello --purge",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			resp, err := g.client().StopWorkload(cmd.Context(), args[0], purge)
			if err != nil {
				return failf("%v", err)
			}
			verb := "stopped"
			if purge {
				verb = "stopped and purged"
			}
			fmt.Fprintf(g.stdout, "workload %q %s (evaluation %s)\n", args[0], verb, shortID(resp.EvalID))
			return nil
		},
	}
	cmd.Flags().BoolVar(&purge, "purge", false, "also remove the workload from the cell")
	return cmd
}

func newNodesCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "nodes",
		Short:   "List nodes: status, eligibility, capacity, allocated, NUMA layout and labels",
		Example: "  strata nodes\n  strata nodes -o json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(g); err != nil {
				return err
			}
			nodes, _, err := g.client().Nodes(cmd.Context(), nil)
			if err != nil {
				return failf("%v", err)
			}
			if g.json() {
				return printJSON(g.stdout, nodes)
			}
			t := newTable(g.stdout, "ID", "NAME", "STATUS", "ELIGIBILITY", "CPU", "MEMORY", "GPUS", "DEVICES", "NUMA", "DRIVERS", "CHECKPOINT", "LABELS")
			for _, n := range nodes {
				t.row(shortID(n.ID), n.Name, n.Status, eligibilityOf(n),
					cpuStr(n.Allocated.CPUMilli)+"/"+cpuStr(n.Capacity.CPUMilli),
					bytesStr(n.Allocated.MemoryBytes)+"/"+bytesStr(n.Capacity.MemoryBytes),
					fmt.Sprintf("%d/%d", n.Allocated.GPUs, n.Capacity.GPUs), devicesSummary(n),
					numaSummary(n), driversSummary(n), checkpointStr(n), nodeLabels(n.Labels))
			}
			return t.flush()
		},
	}
	addOutputFlag(cmd, g)
	return cmd
}

// driversSummary lists the node's task drivers; a node that reports none
// offers the defaults.
func driversSummary(n *api.Node) string {
	if len(n.Drivers) == 0 {
		return strings.Join(api.DefaultDrivers, ",")
	}
	return strings.Join(n.Drivers, ",")
}

// printStartingTasks lists the tasks of live allocations that are pending
// with something to say: "pulling image R: 1/3 layers, 2.0MiB/7.1MiB", or
// why the last start failed and when it is retried.
func printStartingTasks(w io.Writer, allocs []*api.Allocation) {
	var lines []string
	for _, a := range allocs {
		if a.Terminal() || a.DesiredStatus == api.DesiredStop {
			continue
		}
		for name, ts := range a.TaskStates {
			if ts.State == api.TaskPending && ts.Message != "" {
				lines = append(lines, fmt.Sprintf("  %s %s on %s: %s", shortID(a.ID), name, a.NodeName, ts.Message))
			}
		}
	}
	if len(lines) == 0 {
		return
	}
	sort.Strings(lines)
	fmt.Fprintln(w, "\nStarting tasks:")
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}

func numaSummary(n *api.Node) string {
	if len(n.NUMA) == 0 {
		return "-"
	}
	parts := make([]string, len(n.NUMA))
	for i, z := range n.NUMA {
		parts[i] = numaZone(z)
	}
	return strings.Join(parts, ",")
}

// maxComponents is how many score components status shows; -o json has all.
const maxComponents = 5

// printExplanation shows what the scheduler saw when it last placed a group.
func printExplanation(w io.Writer, group, evalID string, e *api.Explanation) {
	fmt.Fprintf(w, "\nGroup %q, last placement (evaluation %s): placed %d of %d; %s examined, %d feasible\n",
		group, shortID(evalID), e.Placed, e.Wanted, plural(e.NodesExamined, "node"), e.NodesFeasible)
	if len(e.Filtered) > 0 {
		fmt.Fprintln(w, "  filtered out:")
		for _, f := range e.Filtered {
			fmt.Fprintf(w, "    %6d  %-12s %s\n", f.Nodes, f.Filter, f.Reason)
		}
	}
	if c := e.Chosen; c != nil {
		fmt.Fprintf(w, "  first replica on %s, score %.4g:%s\n", c.NodeName, c.Score,
			components(len(c.Components), func(k int) (string, float64) { return c.Components[k].Name, c.Components[k].Score }))
	}
}

// components writes the first maxComponents of n named scores as
// " binpack +0.5, prefer zone=z1 +0.3 … 2 more".
func components(n int, at func(k int) (string, float64)) string {
	var sb strings.Builder
	for k := range n {
		if k == maxComponents {
			fmt.Fprintf(&sb, " … %d more", n-k)
			break
		}
		if k > 0 {
			sb.WriteByte(',')
		}
		name, score := at(k)
		fmt.Fprintf(&sb, " %s %+.4g", name, score)
	}
	return sb.String()
}
