package cli

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/strata-dev/strata/api"
)

func newStatusCmd(g *globals) *cobra.Command {
	var watch bool
	cmd := &cobra.Command{
		Use:   "status [NAME]",
		Short: "Show workloads, or one workload with per-group counts and the reasons for what is pending",
		Example: `  strata status
  strata status hello -o yaml
  strata status hello --watch`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(g); err != nil {
				return err
			}
			c := g.client()
			if len(args) == 0 {
				return watchEach(cmd.Context(), g, watch, func(ctx context.Context, q *api.Query) ([]api.WorkloadSummary, uint64, error) {
					list, meta, err := c.Workloads(ctx, q)
					return list, meta.Index, err
				}, func(list []api.WorkloadSummary) error { return printListing(g, list, workloadColumns) }, nil)
			}
			type view struct {
				status *api.WorkloadStatus
				allocs []*api.Allocation
			}
			return watchEach(cmd.Context(), g, watch, func(ctx context.Context, q *api.Query) (view, uint64, error) {
				st, meta, err := c.WorkloadStatus(ctx, args[0], q)
				if err != nil || g.structured() {
					return view{status: st}, meta.Index, err
				}
				// What starting tasks are doing (an image pull's progress)
				// and each check's last result are the agents' news:
				// they come with the allocations.
				allocs, _, err := c.Allocations(ctx, args[0], nil)
				return view{st, allocs}, meta.Index, err
			}, func(v view) error {
				if g.structured() {
					return g.printData(v.status)
				}
				if err := printWorkloadStatus(g.stdout, v.status); err != nil {
					return err
				}
				printStartingTasks(g.stdout, v.allocs)
				printChecks(g.stdout, v.allocs)
				return nil
			}, nil)
		},
	}
	addOutputFlag(cmd, g)
	addWatchFlag(cmd, &watch, "workloads")
	return cmd
}

// workloadColumns are the columns of strata status.
var workloadColumns = []column[api.WorkloadSummary]{
	{header: "NAME", cell: func(w api.WorkloadSummary) string { return w.Name }},
	{header: "STATUS", cell: func(w api.WorkloadSummary) string { return w.Status }},
	{header: "PRIORITY", cell: func(w api.WorkloadSummary) string { return fmt.Sprintf("%s/%d", w.PriorityClass, w.Priority) }},
	{header: "VERSION", cell: func(w api.WorkloadSummary) string { return strconv.FormatUint(w.Version, 10) }},
	{header: "DESIRED", cell: func(w api.WorkloadSummary) string { return strconv.Itoa(w.Desired) }},
	{header: "RUNNING", cell: func(w api.WorkloadSummary) string { return strconv.Itoa(w.Running) }},
	{header: "PENDING", cell: func(w api.WorkloadSummary) string { return strconv.Itoa(w.Pending) }},
	{header: "FAILED", cell: func(w api.WorkloadSummary) string { return strconv.Itoa(w.Failed) }},
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
	var watch bool
	cmd := &cobra.Command{
		Use:   "allocs [WORKLOAD]",
		Short: "List allocations: node, desired and actual state, and each task's pid, exit code and restarts",
		Example: `  strata allocs
  strata allocs hello -o wide
  strata allocs hello --watch`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(g); err != nil {
				return err
			}
			name := ""
			if len(args) == 1 {
				name = args[0]
			}
			c := g.client()
			return watchEach(cmd.Context(), g, watch, func(ctx context.Context, q *api.Query) ([]*api.Allocation, uint64, error) {
				allocs, meta, err := c.Allocations(ctx, name, q)
				return allocs, meta.Index, err
			}, func(allocs []*api.Allocation) error { return printListing(g, allocs, allocColumns(g)) }, nil)
		},
	}
	addOutputFlag(cmd, g)
	addWatchFlag(cmd, &watch, "allocations")
	return cmd
}

// allocColumns are the columns of strata allocs.
func allocColumns(g *globals) []column[*api.Allocation] {
	return []column[*api.Allocation]{
		{header: "ID", cell: func(a *api.Allocation) string { return g.id(a.ID) }},
		{header: "WORKLOAD", cell: func(a *api.Allocation) string { return a.Workload }},
		{header: "GROUP", cell: func(a *api.Allocation) string { return fmt.Sprintf("%s[%d]", a.Group, a.Index) }},
		{header: "NODE", cell: func(a *api.Allocation) string { return a.NodeName }},
		{header: "NODE ID", wide: true, cell: func(a *api.Allocation) string { return dash(a.NodeID) }},
		{header: "VERSION", wide: true, cell: func(a *api.Allocation) string { return strconv.FormatUint(a.WorkloadVersion, 10) }},
		{header: "DESIRED", cell: func(a *api.Allocation) string { return a.DesiredStatus }},
		{header: "STATUS", cell: func(a *api.Allocation) string { return a.ClientStatus }},
		{header: "HEALTH", cell: func(a *api.Allocation) string {
			if a.Health == nil {
				return "-"
			}
			return a.Health.Status
		}},
		{header: "TASKS", cell: taskSummary},
		{header: "CREATED", wide: true, cell: func(a *api.Allocation) string { return timeStr(a.CreateTime) }},
		{header: "REPLACES", wide: true, cell: func(a *api.Allocation) string { return dash(a.PreviousAlloc) }},
		{header: "REASON", cell: allocReason},
	}
}

// allocReason is why an allocation is as it is: the agent's reason, else
// the server's.
func allocReason(a *api.Allocation) string {
	reason := a.ClientReason
	switch {
	case reason == "":
		reason = a.DesiredReason
	case a.ClientStatus == api.AllocFailed && a.DesiredStatus == api.DesiredStop && a.DesiredReason != "":
		reason += "; not replaced: " + a.DesiredReason
	}
	return dash(reason)
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
	var watch bool
	cmd := &cobra.Command{
		Use:   "nodes",
		Short: "List nodes: status, eligibility, capacity, allocated, NUMA layout and labels",
		Example: `  strata nodes
  strata nodes -o wide
  strata nodes --watch`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(g); err != nil {
				return err
			}
			c := g.client()
			return watchEach(cmd.Context(), g, watch, func(ctx context.Context, q *api.Query) ([]*api.Node, uint64, error) {
				nodes, meta, err := c.Nodes(ctx, q)
				return nodes, meta.Index, err
			}, func(nodes []*api.Node) error { return printListing(g, nodes, nodeColumns(g)) }, nil)
		},
	}
	addOutputFlag(cmd, g)
	addWatchFlag(cmd, &watch, "nodes")
	return cmd
}

// nodeColumns are the columns of strata nodes.
func nodeColumns(g *globals) []column[*api.Node] {
	return []column[*api.Node]{
		{header: "ID", cell: func(n *api.Node) string { return g.id(n.ID) }},
		{header: "NAME", cell: func(n *api.Node) string { return n.Name }},
		{header: "STATUS", cell: func(n *api.Node) string { return n.Status }},
		{header: "ELIGIBILITY", cell: eligibilityOf},
		{header: "CPU", cell: func(n *api.Node) string { return cpuStr(n.Allocated.CPUMilli) + "/" + cpuStr(n.Capacity.CPUMilli) }},
		{header: "MEMORY", cell: func(n *api.Node) string {
			return bytesStr(n.Allocated.MemoryBytes) + "/" + bytesStr(n.Capacity.MemoryBytes)
		}},
		{header: "DISK", wide: true, cell: func(n *api.Node) string {
			return bytesStr(n.Allocated.DiskBytes) + "/" + bytesStr(n.Capacity.DiskBytes)
		}},
		{header: "GPUS", cell: func(n *api.Node) string { return fmt.Sprintf("%d/%d", n.Allocated.GPUs, n.Capacity.GPUs) }},
		{header: "DEVICES", cell: devicesSummary},
		{header: "NUMA", cell: numaSummary},
		{header: "DRIVERS", cell: driversSummary},
		{header: "CHECKPOINT", cell: checkpointStr},
		{header: "ADDRESS", wide: true, cell: func(n *api.Node) string { return dash(n.HTTPAddr) }},
		{header: "HEARTBEAT", wide: true, cell: func(n *api.Node) string { return timeStr(n.LastHeartbeat) }},
		{header: "LABELS", cell: func(n *api.Node) string { return nodeLabels(n.Labels) }},
	}
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
