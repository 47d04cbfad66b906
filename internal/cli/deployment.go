package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/strata-dev/strata/api"
)

// The deployment commands: history, revert, plan and deployment
// list|status|promote|fail (docs/deployments.md).

func newHistoryCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "history NAME",
		Short: "List the kept versions of a workload, oldest first, and which are stable",
		Long: `List the versions of a workload the cell keeps (the newest 10, and always the
newest stable one). A version is stable once its deployment succeeded, or when it
needed none and the version before it was stable. 'strata revert NAME VERSION'
registers a kept version again.`,
		Example: `  strata history web
  strata history web -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(g); err != nil {
				return err
			}
			vs, _, err := g.client().WorkloadVersions(cmd.Context(), args[0], nil)
			if err != nil {
				return failf("history of %q: %v", args[0], err)
			}
			if g.structured() {
				return g.printData(vs)
			}
			t := newTable(g.stdout, "VERSION", "STABLE", "SUBMITTED", "DEPLOYMENT", "GROUPS")
			for _, v := range vs {
				groups := ""
				for i, tg := range v.Workload.Groups {
					if i > 0 {
						groups += ", "
					}
					groups += fmt.Sprintf("%s×%d", tg.Name, tg.Replicas)
				}
				dep := "-"
				if v.DeploymentID != "" {
					dep = shortID(v.DeploymentID)
				}
				t.row(strconv.FormatUint(v.Version, 10), strconv.FormatBool(v.Stable), since(v.SubmitTime), dep, groups)
			}
			return t.flush()
		},
	}
	addOutputFlag(cmd, g)
	return cmd
}

func newRevertCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "revert NAME VERSION",
		Short: "Register a kept version of a workload again, as a new version",
		Long: `Register the spec of a kept version (see 'strata history') again. It becomes a
new version; when it changes what the running replicas run, it rolls out like any
update (a deployment, under the group's update policy).`,
		Example: `  strata revert web 3`,
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(g); err != nil {
				return err
			}
			v, err := strconv.ParseUint(args[1], 10, 64)
			if err != nil || v == 0 {
				return failf("VERSION: expected a version number such as 3, got %q", args[1])
			}
			resp, err := g.client().RevertWorkload(cmd.Context(), args[0], v)
			if err != nil {
				return failf("revert %q to version %d: %v", args[0], v, err)
			}
			if g.structured() {
				return g.printData(resp)
			}
			fmt.Fprintf(g.stdout, "workload %q version %d registered from version %d (evaluation %s)\n", resp.Name, resp.Version, v, shortID(resp.EvalID))
			if resp.DeploymentID != "" {
				fmt.Fprintf(g.stdout, "deployment %s: strata deployment status %s --watch\n", shortID(resp.DeploymentID), shortID(resp.DeploymentID))
			}
			return nil
		},
	}
	addOutputFlag(cmd, g)
	return cmd
}

func newDeploymentCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "deployment",
		Short: "Follow, promote or fail the rollouts of workload updates",
		Long: `A deployment follows one update of a workload that replaces its allocations.
Replacements are placed beside the old copies, at most update.maxParallel at a
time; an old copy stops only once its replacement has run update.minHealthyTime.
Canaries (update.canary) run beside the whole old version until promoted.`,
	}
	cmd.AddCommand(newDeploymentListCmd(g), newDeploymentStatusCmd(g), newDeploymentPromoteCmd(g), newDeploymentFailCmd(g))
	return cmd
}

func newDeploymentListCmd(g *globals) *cobra.Command {
	var workload string
	var watch bool
	cmd := &cobra.Command{
		Use:   "list [--workload NAME] [--watch]",
		Short: "List deployments, newest first",
		Example: `  strata deployment list
  strata deployment list --workload web --watch
  strata deployment list -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(g); err != nil {
				return err
			}
			c := g.client()
			return watchEach(cmd.Context(), g, watch, func(ctx context.Context, q *api.Query) ([]*api.Deployment, uint64, error) {
				ds, meta, err := c.Deployments(ctx, workload, q)
				return ds, meta.Index, err
			}, func(ds []*api.Deployment) error { return printListing(g, ds, deploymentColumns(g)) }, nil)
		},
	}
	cmd.Flags().StringVar(&workload, "workload", "", "only this workload's deployments")
	cmd.Flags().BoolVar(&watch, "watch", false, "print again on every change, until interrupted")
	addOutputFlag(cmd, g)
	return cmd
}

func newDeploymentStatusCmd(g *globals) *cobra.Command {
	var watch bool
	cmd := &cobra.Command{
		Use:   "status ID [--watch]",
		Short: "Show a deployment's status and per-group progress",
		Long: `Show a deployment: its status (running, paused for promotion, blocked with the
scheduler's reason, successful, failed, cancelled) and per group the replicas
wanted, placed, healthy and unhealthy, canaries, whether promoted, and how many old
copies still run. ID may be a unique prefix. With --watch it prints again on every
change and returns when the deployment ends (exit 1 when it failed).`,
		Example: `  strata deployment status 3f2a --watch
  strata deployment status 3f2a -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(g); err != nil {
				return err
			}
			c := g.client()
			var last *api.Deployment
			progress := startWaitProgress(g, "deployment "+args[0])
			defer progress.end()
			err := watchEach(cmd.Context(), g, watch, func(ctx context.Context, q *api.Query) (*api.Deployment, uint64, error) {
				d, meta, err := c.Deployment(ctx, args[0], q)
				return d, meta.Index, err
			}, func(d *api.Deployment) error {
				last = d
				progress.set(deploymentProgress(d))
				if g.structured() {
					return g.printData(d)
				}
				return printDeployment(g.stdout, d)
			}, func(d *api.Deployment) bool { return api.DeploymentTerminal(d.Status) })
			if err != nil {
				return err
			}
			if watch && last != nil && last.Status == api.DeploymentFailed {
				return failf("deployment %s failed: %s", shortID(last.ID), last.StatusDescription)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&watch, "watch", false, "print again on every change until the deployment ends")
	addOutputFlag(cmd, g)
	return cmd
}

func printDeployment(w io.Writer, d *api.Deployment) error {
	fmt.Fprintf(w, "deployment %s  workload %s  version %d → %d  %s\n", d.ID, d.Workload, d.FromVersion, d.Version, d.Status)
	if d.StatusDescription != "" {
		fmt.Fprintf(w, "  %s\n", d.StatusDescription)
	}
	if d.RevertedTo > 0 {
		fmt.Fprintf(w, "  reverted: version %d registered\n", d.RevertedTo)
	}
	if gd := d.Guard; gd != nil {
		fmt.Fprintf(w, "  rollout guard: %s\n", guardLine(gd))
	}
	t := newTable(w, "GROUP", "DESIRED", "PLACED", "HEALTHY", "UNHEALTHY", "CANARIES", "PROMOTED", "OLD RUNNING")
	for _, g := range d.Groups {
		canaries, promoted := "-", "-"
		if g.DesiredCanaries > 0 {
			canaries = fmt.Sprintf("%d/%d", g.Canaries, g.DesiredCanaries)
			promoted = strconv.FormatBool(g.Promoted)
		}
		t.row(g.Name, strconv.Itoa(g.Desired), strconv.Itoa(g.Placed), strconv.Itoa(g.Healthy), strconv.Itoa(g.Unhealthy),
			canaries, promoted, strconv.Itoa(g.OldRunning))
	}
	return t.flush()
}

func newDeploymentPromoteCmd(g *globals) *cobra.Command {
	var groups []string
	cmd := &cobra.Command{
		Use:   "promote ID [--group G]...",
		Short: "Promote a deployment's canaries: the rolling update goes on",
		Example: `  strata deployment promote 3f2a
  strata deployment promote 3f2a --group web`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(g); err != nil {
				return err
			}
			resp, err := g.client().PromoteDeployment(cmd.Context(), args[0], groups)
			if err != nil {
				return failf("promote %s: %v", args[0], err)
			}
			if g.structured() {
				return g.printData(resp)
			}
			fmt.Fprintf(g.stdout, "deployment %s promoted (evaluation %s)\n", shortID(resp.Deployment), shortID(resp.EvalID))
			return nil
		},
	}
	cmd.Flags().StringSliceVar(&groups, "group", nil, "promote only these groups (default: every group)")
	addOutputFlag(cmd, g)
	return cmd
}

func newDeploymentFailCmd(g *globals) *cobra.Command {
	var reason string
	cmd := &cobra.Command{
		Use:     "fail ID [--reason R]",
		Short:   "Fail a deployment: nothing more is replaced; with autoRevert the last stable version is registered again",
		Example: `  strata deployment fail 3f2a --reason "error rate up"`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(g); err != nil {
				return err
			}
			resp, err := g.client().FailDeployment(cmd.Context(), args[0], reason)
			if err != nil {
				return failf("fail %s: %v", args[0], err)
			}
			if g.structured() {
				return g.printData(resp)
			}
			fmt.Fprintf(g.stdout, "deployment %s failed", shortID(resp.Deployment))
			if resp.RevertedTo > 0 {
				fmt.Fprintf(g.stdout, "; reverted: version %d registered", resp.RevertedTo)
			}
			fmt.Fprintln(g.stdout)
			return nil
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why (kept in the deployment's description)")
	addOutputFlag(cmd, g)
	return cmd
}

// deploymentColumns are the columns of strata deployment list.
func deploymentColumns(g *globals) []column[*api.Deployment] {
	return []column[*api.Deployment]{
		{header: "ID", cell: func(d *api.Deployment) string { return g.id(d.ID) }},
		{header: "WORKLOAD", cell: func(d *api.Deployment) string { return d.Workload }},
		{header: "VERSION", cell: func(d *api.Deployment) string { return fmt.Sprintf("%d→%d", d.FromVersion, d.Version) }},
		{header: "STATUS", cell: func(d *api.Deployment) string { return d.Status }},
		{header: "HEALTHY", cell: func(d *api.Deployment) string { return deploymentHealthy(d) }},
		{header: "DESCRIPTION", cell: func(d *api.Deployment) string { return dash(d.StatusDescription) }},
	}
}

// deploymentHealthy is "healthy/desired" over a deployment's groups.
func deploymentHealthy(d *api.Deployment) string {
	healthy, desired := 0, 0
	for _, dg := range d.Groups {
		healthy += dg.Healthy
		desired += dg.Desired
	}
	return fmt.Sprintf("%d/%d", healthy, desired)
}

// deploymentProgress is a deployment's state in one line, for progress.
func deploymentProgress(d *api.Deployment) string {
	return d.Status + ", " + deploymentHealthy(d) + " healthy"
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// guardLine is the rollout guard's evidence in one line.
func guardLine(gd *api.DeploymentGuard) string {
	if gd.Halted != "" {
		return "halted it: " + gd.Halted
	}
	line := fmt.Sprintf("%d of %d starts failed (old version: %.1f %%); %d of %d events beside the old version hit the new (%.1f expected)",
		gd.StartFailures, gd.StartTrials, 100*gd.BaselineStartRate, gd.EventsNew, gd.EventsNew+gd.EventsOld, gd.ExpectedNew)
	if gd.BaselineRate > 0 && gd.ExposureHours > 0 {
		line += fmt.Sprintf("; %.2g events per copy-hour (old version: at most %.2g)", float64(gd.HistoryEvents)/gd.ExposureHours, gd.BaselineRate)
	}
	if gd.Explained > 0 {
		line += fmt.Sprintf("; %d explained by incidents", gd.Explained)
	}
	return line
}
