package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/strata-dev/strata/api"
)

// newAllocCmd groups the commands that act on one allocation.
func newAllocCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "alloc",
		Short: "Act on one allocation: checkpoint it, migrate it to another node",
		Long: `Act on one allocation.

  checkpoint  write a CRIU checkpoint of its tasks on their node; they keep running
  migrate     move it to another node keeping its processes' memory (checkpoint,
              send, restore), or by stop and restart when it cannot be checkpointed

Exec tasks and containers (driver containerd) can be checkpointed. Both
commands need criu on the nodes involved: strata nodes shows CHECKPOINT, with
the drivers whose tasks a move keeps the memory of ("criu 4.2 (memory:
containerd,exec)"). See docs/migration.md.`,
	}
	cmd.AddCommand(newAllocCheckpointCmd(g), newAllocMigrateCmd(g))
	return cmd
}

type migrateFlags struct {
	to      string
	noWait  bool
	timeout time.Duration
}

func newAllocCheckpointCmd(g *globals) *cobra.Command {
	var f migrateFlags
	cmd := &cobra.Command{
		Use:   "checkpoint ALLOC",
		Short: "Checkpoint an allocation's tasks on their node (they keep running)",
		Long: `Checkpoint an allocation's tasks with CRIU on the node that runs them. The tasks
are frozen while their memory is written, then go on; the image stays on the
node (<agent data dir>/allocs/<alloc>/<task>/checkpoint, replaced by the next
checkpoint). Waits for the outcome and prints its size and how long the tasks
were frozen, unless --no-wait.`,
		Example: "  strata alloc checkpoint 3f2a\n  strata alloc checkpoint 3f2a -o json",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMigrate(cmd.Context(), g, args[0], &api.MigrateRequest{Kind: api.MigrationCheckpoint}, f)
		},
	}
	cmd.Flags().BoolVar(&f.noWait, "no-wait", false, "return once the checkpoint is requested")
	cmd.Flags().DurationVar(&f.timeout, "timeout", 10*time.Minute, "how long to wait for the outcome")
	addOutputFlag(cmd, g)
	return cmd
}

func newAllocMigrateCmd(g *globals) *cobra.Command {
	var f migrateFlags
	cmd := &cobra.Command{
		Use:   "migrate ALLOC",
		Short: "Move a running allocation to another node, keeping its memory",
		Long: `Move a running allocation to another node. Its node checkpoints its tasks with
CRIU (they stop), sends the image to the target node's agent, which restores
them stopped and asks the servers to commit the move; only once the move is
committed do they run again, on the target. If anything fails before the
commit, the move is aborted and the tasks are restored where they were. A task
that cannot be checkpointed is stopped and started afresh on the target
instead, and the outcome says why.

Without --to the scheduler chooses the target among the ready nodes that can
restore (as if the allocation's node were gone). Waits for the outcome and
prints checkpoint size and time, transfer, restore and commit time and the
tasks' downtime, unless --no-wait.`,
		Example: "  strata alloc migrate 3f2a\n  strata alloc migrate 3f2a --to node-2\n  strata alloc migrate 3f2a -o json",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMigrate(cmd.Context(), g, args[0], &api.MigrateRequest{Kind: api.MigrationMove, To: f.to}, f)
		},
	}
	cmd.Flags().StringVar(&f.to, "to", "", "target node (id or name); default: the scheduler chooses")
	cmd.Flags().BoolVar(&f.noWait, "no-wait", false, "return once the move is requested")
	cmd.Flags().DurationVar(&f.timeout, "timeout", 10*time.Minute, "how long to wait for the outcome")
	addOutputFlag(cmd, g)
	return cmd
}

func runMigrate(ctx context.Context, g *globals, allocID string, req *api.MigrateRequest, f migrateFlags) error {
	if err := checkOutput(g); err != nil {
		return err
	}
	c := g.client()
	ans, err := c.Migrate(ctx, allocID, req)
	if err != nil {
		return failf("%v", err)
	}
	m := ans.Migration
	if f.noWait {
		if g.structured() {
			return g.printData(m)
		}
		fmt.Fprintf(g.stdout, "%s %s of allocation %s requested\n", m.Kind, m.ID, shortID(ans.AllocID))
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	progress := startWaitProgress(g, fmt.Sprintf("%s %s of allocation %s", m.Kind, m.ID, shortID(ans.AllocID)))
	a, err := awaitMigration(ctx, c, ans.AllocID, m.ID)
	progress.end()
	if err != nil {
		return failf("%s %s: %v", m.Kind, m.ID, err)
	}
	if g.structured() {
		return g.printData(a.Migration)
	}
	printMigration(g.stdout, a)
	switch a.Migration.Outcome {
	case api.MigrationCommitted, api.MigrationDone:
		return nil
	}
	return failf("%s %s %s: %s", m.Kind, m.ID, a.Migration.Outcome, a.Migration.Reason)
}

// reportGrace is how long the CLI waits for the source's figures once the
// outcome is known.
const reportGrace = 10 * time.Second

// awaitMigration follows the allocation until the migration has ended
// and its figures are in (or reportGrace after its end).
func awaitMigration(ctx context.Context, c *api.Client, allocID, migrationID string) (*api.Allocation, error) {
	var index uint64
	var endedAt time.Time
	for {
		wait := 30 * time.Second
		if !endedAt.IsZero() {
			wait = time.Until(endedAt.Add(reportGrace))
			if wait <= 0 {
				return c.Allocation(ctx, allocID)
			}
		}
		a, meta, err := c.AllocationWatch(ctx, allocID, &api.Query{Index: index, Wait: wait})
		if err != nil {
			return nil, err
		}
		index = meta.Index
		m := a.Migration
		if m == nil || m.ID != migrationID {
			return nil, fmt.Errorf("allocation %s no longer shows the migration", allocID)
		}
		if m.Outcome != "" {
			if m.Report != nil {
				return a, nil
			}
			if endedAt.IsZero() {
				endedAt = time.Now()
			}
		}
	}
}

func printMigration(w io.Writer, a *api.Allocation) {
	m := a.Migration
	switch {
	case m.Kind == api.MigrationCheckpoint && m.Outcome == api.MigrationDone:
		fmt.Fprintf(w, "checkpoint %s of allocation %s written on its node\n", m.ID, shortID(a.ID))
	case m.Kind == api.MigrationCheckpoint:
		fmt.Fprintf(w, "checkpoint %s of allocation %s %s: %s\n", m.ID, shortID(a.ID), m.Outcome, m.Reason)
	case m.Outcome == api.MigrationCommitted && m.Fallback:
		fmt.Fprintf(w, "allocation %s moved to node %s by stop and restart (its memory is lost): %s\n", shortID(a.ID), m.TargetNodeName, m.Reason)
	case m.Outcome == api.MigrationCommitted:
		fmt.Fprintf(w, "allocation %s migrated to node %s, its processes restored from their checkpoint\n", shortID(a.ID), m.TargetNodeName)
	default:
		fmt.Fprintf(w, "migration %s of allocation %s %s; it stays on node %s: %s\n", m.ID, shortID(a.ID), m.Outcome, a.NodeName, m.Reason)
	}
	if r := m.Report; r != nil {
		fmt.Fprintf(w, "  checkpoint %s in %dms", bytesStr(r.CheckpointBytes), r.CheckpointMs)
		if m.Kind == api.MigrationMove {
			fmt.Fprintf(w, ", transfer %dms, restore %dms, commit %dms", r.TransferMs, r.RestoreMs, r.CommitMs)
		}
		fmt.Fprintf(w, "; downtime %dms\n", r.DowntimeMs)
	}
}

// checkpointStr is the CHECKPOINT column of strata nodes.
func checkpointStr(n *api.Node) string {
	switch {
	case n.Checkpoint == nil:
		return "-"
	case n.Checkpoint.Available && len(n.Checkpoint.Drivers) > 0 && n.Checkpoint.RootOnly:
		return n.Checkpoint.Tool + " (memory: " + strings.Join(n.Checkpoint.Drivers, ",") + ", root tasks only)"
	case n.Checkpoint.Available && len(n.Checkpoint.Drivers) > 0:
		return n.Checkpoint.Tool + " (memory: " + strings.Join(n.Checkpoint.Drivers, ",") + ")"
	case n.Checkpoint.Available:
		return n.Checkpoint.Tool
	}
	return "no"
}
