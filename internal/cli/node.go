package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/strata-dev/strata/api"
)

func newNodeCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "node",
		Short: "Operate on one node: status, drain, eligibility (cordon), quarantine, purge",
		Long: `Operate on one node, named by id or name.

  strata node status NODE              what runs there, and what a drain has left to move
  strata node eligibility NODE --disable   cordon: no new work; what runs stays
  strata node drain NODE --watch       move everything off, under each group's disruption budget
  strata node quarantine NODE --reason "ecc errors"   fence off and drain; --lift ends it
  strata node purge NODE               remove a dead node; its allocations are replaced

A drain places each replacement before it stops the allocation it replaces,
never moves more replicas of a group at once than the group's
disruption.maxUnavailable (default 1) allows, and stops whatever is left at
its deadline. The node stays ineligible afterwards; enable it again with
strata node eligibility NODE --enable. See docs/nodes.md.`,
	}
	cmd.AddCommand(newNodeStatusCmd(g), newNodeEligibilityCmd(g), newNodeDrainCmd(g), newNodeQuarantineCmd(g), newNodePurgeCmd(g))
	return cmd
}

func newNodeStatusCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "status NODE",
		Short:   "Show a node: status, eligibility, drain and quarantine, and its allocations",
		Example: "  strata node status n1\n  strata node status n1 -o json",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(g); err != nil {
				return err
			}
			st, _, err := g.client().NodeStatus(cmd.Context(), args[0], nil)
			if err != nil {
				return failf("%v", err)
			}
			if g.structured() {
				return g.printData(st)
			}
			return printNodeStatus(g.stdout, st)
		},
	}
	addOutputFlag(cmd, g)
	return cmd
}

// eligibilityOf is a node's eligibility as shown: empty means eligible.
func eligibilityOf(n *api.Node) string {
	if n.Eligibility == "" {
		return api.NodeEligible
	}
	return n.Eligibility
}

func printNodeStatus(w io.Writer, st *api.NodeStatus) error {
	n := st.Node
	fmt.Fprintf(w, "Node %s (%s)\n", n.Name, n.ID)
	fmt.Fprintf(w, "  status:       %s", n.Status)
	if n.StatusReason != "" {
		fmt.Fprintf(w, " (%s)", n.StatusReason)
	}
	fmt.Fprintf(w, "\n  eligibility:  %s\n", eligibilityOf(n))
	if q := n.Quarantine; q != nil {
		by := ""
		if q.Auto {
			by = " (automatic: lift it with strata node quarantine " + n.Name + " --lift)"
		}
		fmt.Fprintf(w, "  quarantine:   %s, since %s%s\n", q.Reason, q.Since.UTC().Format(time.RFC3339), by)
	}
	if d := n.Drain; d != nil {
		keep := ""
		if d.KeepSystem {
			keep = ", keeping system workloads"
		}
		fmt.Fprintf(w, "  drain:        %d allocations left to move, deadline %s%s\n", st.Remaining, d.Deadline.UTC().Format(time.RFC3339), keep)
	}
	if n.DiskPressure != "" {
		fmt.Fprintf(w, "  disk:         PRESSURE: %s\n", n.DiskPressure)
	}
	// Every dimension the node offers, allocated/capacity; those every
	// task asks for (cpu, memory) always.
	for k, d := range api.Dimensions {
		if c := n.Capacity.Get(k); d.Capacity && (c > 0 || d.Spec.NonZero) {
			fmt.Fprintf(w, "  %-14s%s/%s\n", d.Name+":", quantityStr(d.Unit, n.Allocated.Get(k)), quantityStr(d.Unit, c))
		}
	}
	fmt.Fprintf(w, "\nAllocations (%d)\n", len(st.Allocations))
	if len(st.Allocations) == 0 {
		return nil
	}
	t := newTable(w, "ID", "WORKLOAD", "GROUP", "DESIRED", "STATUS", "REPLACES")
	for _, a := range st.Allocations {
		prev := "-"
		if a.PreviousAlloc != "" {
			prev = shortID(a.PreviousAlloc)
		}
		t.row(shortID(a.ID), a.Workload, fmt.Sprintf("%s[%d]", a.Group, a.Index), a.DesiredStatus, a.ClientStatus, prev)
	}
	return t.flush()
}

// printNodeOp reports a node operation's result.
func printNodeOp(g *globals, resp *api.NodeOpResponse, what string) error {
	if g.structured() {
		return g.printData(resp)
	}
	if resp.Node == nil {
		fmt.Fprintf(g.stdout, "%s (index %d)\n", what, resp.Index)
		return nil
	}
	fmt.Fprintf(g.stdout, "node %s: %s; status %s, %s (index %d)\n", resp.Node.Name, what, resp.Node.Status, eligibilityOf(resp.Node), resp.Index)
	return nil
}

func newNodeEligibilityCmd(g *globals) *cobra.Command {
	var enable, disable bool
	cmd := &cobra.Command{
		Use:   "eligibility NODE --enable|--disable",
		Short: "Cordon (--disable) or uncordon (--enable) a node: whether it takes new work",
		Long: `--disable keeps new work off the node (the scheduler's "eligible" stage
rejects it, and says so in explanations); what runs there stays. --enable
makes it take work again; a draining or quarantined node must have its
drain cancelled or its quarantine lifted first.`,
		Example: "  strata node eligibility n1 --disable\n  strata node eligibility n1 --enable -o json",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(g); err != nil {
				return err
			}
			if enable == disable {
				return failf("give one of --enable and --disable")
			}
			resp, err := g.client().SetNodeEligibility(cmd.Context(), args[0], enable)
			if err != nil {
				return failf("%v", err)
			}
			what := "eligible"
			if disable {
				what = "ineligible"
			}
			return printNodeOp(g, resp, what)
		},
	}
	cmd.Flags().BoolVar(&enable, "enable", false, "the node takes new work")
	cmd.Flags().BoolVar(&disable, "disable", false, "the node takes no new work (cordon)")
	addOutputFlag(cmd, g)
	return cmd
}

func newNodeDrainCmd(g *globals) *cobra.Command {
	var deadline time.Duration
	var keepSystem, cancel, watch bool
	cmd := &cobra.Command{
		Use:   "drain NODE",
		Short: "Move every allocation off a node, under the disruption budgets, by a deadline",
		Long: `Drain a node: it becomes ineligible, and the scheduler moves its allocations
elsewhere, placing each replacement before it stops the allocation it
replaces. At most disruption.maxUnavailable replicas of a group (default 1)
are moving or out of service at once; a group already short waits. At the
deadline (default 1h) whatever is left is stopped and replaced. --keep-system
leaves workloads of priority class system. --watch follows the drain until
it is done. The node stays ineligible afterwards.`,
		Example: `  strata node drain n1 --watch
  strata node drain n1 --deadline 30m --keep-system
  strata node drain n1 --cancel`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(g); err != nil {
				return err
			}
			req := &api.DrainRequest{KeepSystem: keepSystem, Cancel: cancel}
			if cmd.Flags().Changed("deadline") {
				req.Deadline = deadline.String()
			}
			resp, err := g.client().DrainNode(cmd.Context(), args[0], req)
			if err != nil {
				return failf("%v", err)
			}
			what := "draining"
			if cancel {
				what = "drain cancelled"
			}
			if !watch || cancel {
				return printNodeOp(g, resp, what)
			}
			if !g.structured() {
				if err := printNodeOp(g, resp, what); err != nil {
					return err
				}
			}
			return watchDrain(cmd.Context(), g, resp.Node.ID)
		},
	}
	cmd.Flags().DurationVar(&deadline, "deadline", api.DefaultDrainDeadline, "how long moves may take; then what is left is stopped")
	cmd.Flags().BoolVar(&keepSystem, "keep-system", false, "leave allocations of system workloads (priorityClass: system)")
	cmd.Flags().BoolVar(&cancel, "cancel", false, "end a drain in progress (the node stays ineligible)")
	cmd.Flags().BoolVar(&watch, "watch", false, "follow the drain until it is done, printing progress")
	addOutputFlag(cmd, g)
	return cmd
}

// watchDrain follows node id with blocking queries until its drain ends,
// printing each change of what is left; with -o json it prints the final
// status.
func watchDrain(ctx context.Context, g *globals, id string) error {
	var index uint64
	last := -1
	progress := startWaitProgress(g, "drain of node "+id)
	defer progress.end()
	for {
		st, meta, err := g.client().NodeStatus(ctx, id, &api.Query{Index: index, Wait: 30 * time.Second})
		if err != nil {
			return failf("%v", err)
		}
		index = meta.Index
		if st.Node.Drain == nil {
			if g.structured() {
				return g.printData(st)
			}
			fmt.Fprintf(g.stdout, "drain of %s done: %d allocations left on it\n", st.Node.Name, len(st.Allocations))
			return nil
		}
		progress.set(fmt.Sprintf("%d allocations left to move", st.Remaining))
		if st.Remaining != last && !g.structured() {
			fmt.Fprintf(g.stdout, "%s  %d allocations left to move (deadline %s)\n", time.Now().UTC().Format(time.TimeOnly),
				st.Remaining, st.Node.Drain.Deadline.UTC().Format(time.RFC3339))
			last = st.Remaining
		}
	}
}

func newNodeQuarantineCmd(g *globals) *cobra.Command {
	var reason string
	var deadline time.Duration
	var lift bool
	cmd := &cobra.Command{
		Use:   "quarantine NODE --reason R | --lift",
		Short: "Fence a node off (no new work, its work drained), or lift its quarantine",
		Long: `Quarantine a node that misbehaves (failing hardware, flapping): it takes no
new work and is drained under the disruption budgets, by --deadline
(default 1h). The reason is kept on the node and in its events. --lift ends
the quarantine (and its drain) and makes the node eligible again.

The leader also quarantines nodes on its own: those whose allocations fail
far more often than the rest of the cell's, or whose heartbeats flap, with
the evidence as the reason (docs/nodes.md, "Automatic quarantine"). Those
are lifted the same way; evidence from before a lift is not weighed again.`,
		Example: `  strata node quarantine n1 --reason "ecc errors on dimm 3"
  strata node quarantine n1 --lift`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(g); err != nil {
				return err
			}
			req := &api.QuarantineRequest{Reason: reason, Lift: lift}
			if cmd.Flags().Changed("deadline") {
				req.Deadline = deadline.String()
			}
			resp, err := g.client().QuarantineNode(cmd.Context(), args[0], req)
			if err != nil {
				return failf("%v", err)
			}
			what := "quarantined"
			if lift {
				what = "quarantine lifted"
			}
			return printNodeOp(g, resp, what)
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why the node is quarantined (required unless --lift)")
	cmd.Flags().DurationVar(&deadline, "deadline", api.DefaultDrainDeadline, "how long the quarantine's drain may take")
	cmd.Flags().BoolVar(&lift, "lift", false, "end the quarantine: the node takes work again")
	addOutputFlag(cmd, g)
	return cmd
}

func newNodePurgeCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "purge NODE",
		Short: "Remove a dead (down) node: its allocations are marked lost and replaced",
		Long: `Purge a node that is down for good: it leaves the node list, and its
allocations are marked lost, so their workloads place replacements. A node
whose agent is still heard from is refused: drain it and stop its agent
first. An agent that comes back later registers as a new node.`,
		Example: "  strata node purge n1",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(g); err != nil {
				return err
			}
			resp, err := g.client().PurgeNode(cmd.Context(), args[0])
			if err != nil {
				return failf("%v", err)
			}
			return printNodeOp(g, resp, fmt.Sprintf("node %s purged; %d allocations lost", args[0], resp.Lost))
		},
	}
	addOutputFlag(cmd, g)
	return cmd
}
