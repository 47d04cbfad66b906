package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/replica"
)

func newOperatorCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "operator",
		Short: "Operate the control plane: its raft servers and snapshots of its state",
		Long: `Operate the control plane.

  strata operator raft peers                 # the cell's servers, which one leads
  strata operator raft remove-peer ID|ADDR   # drop a server that is gone for good
  strata operator snapshot save FILE         # a consistent snapshot of the whole state
  strata operator snapshot restore FILE      # replace the whole state with a snapshot`,
	}
	raftCmd := &cobra.Command{Use: "raft", Short: "The cell's raft servers"}
	raftCmd.AddCommand(newRaftPeersCmd(g), newRaftRemovePeerCmd(g))
	snapCmd := &cobra.Command{Use: "snapshot", Short: "Save and restore snapshots of the cell's state"}
	snapCmd.AddCommand(newSnapshotSaveCmd(g), newSnapshotRestoreCmd(g))
	cmd.AddCommand(raftCmd, snapCmd)
	return cmd
}

func newRaftPeersCmd(g *globals) *cobra.Command {
	var stale bool
	cmd := &cobra.Command{
		Use:   "peers",
		Short: "List the cell's servers: id, server address, whether each votes and which leads",
		Long: `List the servers of the cell's raft configuration as its leader knows them.
With --stale, the server you talk to answers from its own knowledge, which
works when the cell has no leader (a lost quorum).`,
		Example: `  strata operator raft peers
  strata --addr http://10.0.0.2:4680 operator raft peers --stale -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(g); err != nil {
				return err
			}
			c := g.client()
			conf, err := c.RaftConfiguration(cmd.Context(), &api.Query{Stale: stale})
			if errors.Is(err, api.ErrNoQuorum) && !stale {
				// Without a leader the leader's view is not to be had:
				// show what the server asked knows, and say so.
				fmt.Fprintf(g.stderr, "%v\nthe servers as %s knows them (--stale):\n", err, c.Addr())
				conf, err = c.RaftConfiguration(cmd.Context(), &api.Query{Stale: true})
			}
			if err != nil {
				return failf("%v", err)
			}
			if g.structured() {
				return g.printData(conf)
			}
			return printRaftPeers(g.stdout, conf)
		},
	}
	cmd.Flags().BoolVar(&stale, "stale", false, "let any server answer from its own view (no leader needed)")
	addOutputFlag(cmd, g)
	return cmd
}

// printRaftPeers is the table of strata operator raft peers.
func printRaftPeers(w io.Writer, conf *api.RaftConfiguration) error {
	t := newTable(w, "ID", "ADDRESS", "VOTER", "STATE")
	for _, s := range conf.Servers {
		state := "follower"
		if s.Leader {
			state = "leader"
		}
		t.row(s.ID, s.Address, fmt.Sprint(s.Voter), state)
	}
	return t.flush()
}

// explainNoQuorum follows an error that says the cell has no quorum with
// what the servers know of it, and what to do.
func explainNoQuorum(ctx context.Context, g *globals, w io.Writer) {
	c := g.client()
	c.RetryFor = 3 * time.Second
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conf, err := c.RaftConfiguration(ctx, &api.Query{Stale: true})
	if err != nil {
		fmt.Fprintf(w, "(strata operator raft peers --stale: %v)\n", err)
		return
	}
	fmt.Fprintf(w, "\nstrata operator raft peers --stale, as %s knows the cell:\n", c.Addr())
	printRaftPeers(w, conf)
	fmt.Fprintln(w, "\nA leader needs a majority of the voting servers. Start the ones that are down; if they are gone for good, see docs/operations.md, \"A server dies\".")
}

func newRaftRemovePeerCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "remove-peer ID|ADDR",
		Short: "Remove a server that is gone for good from the cell's raft configuration",
		Long: `Remove a server from the cell's raft configuration, by its id or its server
address (host:port, as in 'strata operator raft peers'). Use it for a server
that will not come back, so that it no longer counts toward the quorum. A
removed server that is still running stays out; restarted with --join, it
asks to be added again.`,
		Example: `  strata operator raft remove-peer 10.0.0.3:4681`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(g); err != nil {
				return err
			}
			out, err := g.client().RemoveRaftPeer(cmd.Context(), args[0])
			if err != nil {
				return failf("%v", err)
			}
			if g.structured() {
				return g.printData(out)
			}
			fmt.Fprintf(g.stdout, "removed server %s (%s) from the cell\n", out.Removed.ID, out.Removed.Address)
			return nil
		},
	}
	addOutputFlag(cmd, g)
	return cmd
}

func newSnapshotSaveCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "save FILE",
		Short: "Save a consistent snapshot of the cell's whole state to FILE",
		Long: `Save a consistent snapshot of the cell's whole state (workloads, nodes,
allocations, evaluations, events, cell configuration) to FILE: one point in
time of the leader's state store, with a checksum. The file is written
under a temporary name and renamed once complete and verified.`,
		Example: `  strata operator snapshot save backup.snap`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(g); err != nil {
				return err
			}
			path := args[0]
			tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".part-*")
			if err != nil {
				return failf("%v", err)
			}
			defer os.Remove(tmp.Name())
			defer tmp.Close()
			if _, err := g.client().SaveSnapshot(cmd.Context(), tmp); err != nil {
				return failf("%v", err)
			}
			if _, err := tmp.Seek(0, io.SeekStart); err != nil {
				return failf("%v", err)
			}
			info, err := replica.CheckSnapshotFile(tmp)
			if err != nil {
				return failf("the snapshot received is damaged, nothing saved: %v", err)
			}
			if err := tmp.Sync(); err != nil {
				return failf("%v", err)
			}
			if err := os.Rename(tmp.Name(), path); err != nil {
				return failf("%v", err)
			}
			if g.structured() {
				return g.printData(info)
			}
			fmt.Fprintf(g.stdout, "saved the state at index %d to %s (%d bytes, sha256 %s)\n", info.Index, path, info.Bytes, info.SHA256)
			return nil
		},
	}
	addOutputFlag(cmd, g)
	return cmd
}

func newSnapshotRestoreCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "restore FILE",
		Short: "Replace the cell's whole state with a snapshot FILE",
		Long: `Replace the cell's whole state with a snapshot saved by 'snapshot save'.
The file is checked here (header, size, checksum) and again by the leader,
which also decodes it completely; a damaged file is refused and changes
nothing. The leader then installs it through raft's restore and sends it to
every follower; writes made since the snapshot was saved are gone.`,
		Example: `  strata operator snapshot restore backup.snap`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(g); err != nil {
				return err
			}
			path := args[0]
			f, err := os.Open(path)
			if err != nil {
				return failf("%v", err)
			}
			_, err = replica.CheckSnapshotFile(f)
			f.Close()
			if err != nil {
				return failf("%s: %v; nothing was changed", path, err)
			}
			info, err := g.client().RestoreSnapshot(cmd.Context(), func() (io.ReadCloser, error) { return os.Open(path) })
			if err != nil {
				return failf("%v", err)
			}
			if g.structured() {
				return g.printData(info)
			}
			fmt.Fprintf(g.stdout, "restored the state saved at index %d from %s\n", info.Index, path)
			return nil
		},
	}
	addOutputFlag(cmd, g)
	return cmd
}
