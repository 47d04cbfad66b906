package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/strata-dev/strata/internal/keyring"
)

// newKeyringCmd manages a server's secrets keyring file. It works on the
// file, not through the API: the keys never cross the network.
func newKeyringCmd(g *globals) *cobra.Command {
	var dataDir, file string
	path := func() string {
		if file != "" {
			return file
		}
		return filepath.Join(dataDir, keyring.FileName)
	}
	cmd := &cobra.Command{
		Use:   "keyring",
		Short: "List, rotate and retire the keys that seal workload secrets",
		Long: `A server seals every workload secret with the active key of its keyring
(AES-256-GCM) before the secret enters the raft log; older keys stay to open
what they sealed. The keyring is a file in the server's data dir
(keyring.json, 0600), created on first start.

Every server of a cell must hold the same keyring: create it on one server,
copy the file to the others' data dirs (or --keyring-file) before they start.
To rotate, run 'strata keyring rotate' on one server and copy the file to the
others: running servers re-read it when it changes. Resubmit workloads to
seal their secrets under the new key, then retire the old key with
'strata keyring remove ID' on every server.`,
		Example: `  strata keyring list --data-dir /var/lib/strata/server
  strata keyring rotate --data-dir /var/lib/strata/server
  strata keyring remove 1a2b3c4d --data-dir /var/lib/strata/server`,
	}
	cmd.PersistentFlags().StringVar(&dataDir, "data-dir", "strata-data/server", "the server's data dir")
	cmd.PersistentFlags().StringVar(&file, "keyring-file", "", "the keyring file (default <data-dir>/keyring.json)")

	list := &cobra.Command{
		Use:   "list",
		Short: "List the keys (never their secret part); the active one seals new secrets",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if err := checkOutput(g); err != nil {
				return err
			}
			k, err := keyring.Load(path())
			if err != nil {
				return failf("%v", err)
			}
			return printListing(g, k.Keys(), []column[keyring.KeyInfo]{
				{header: "ID", cell: func(k keyring.KeyInfo) string { return k.ID }},
				{header: "CREATED", cell: func(k keyring.KeyInfo) string { return k.Created.Format(time.RFC3339) }},
				{header: "ACTIVE", cell: func(k keyring.KeyInfo) string {
					if k.Active {
						return "yes"
					}
					return ""
				}},
			})
		},
	}
	addOutputFlag(list, g)
	rotate := &cobra.Command{
		Use:   "rotate",
		Short: "Add a new key and make it the active one",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			k, err := keyring.Load(path())
			if err != nil {
				return failf("%v", err)
			}
			id, err := k.Rotate()
			if err != nil {
				return failf("%v", err)
			}
			fmt.Fprintf(g.stdout, "new active key %s in %s; copy the file to every server of the cell\n", id, path())
			return nil
		},
	}
	remove := &cobra.Command{
		Use:   "remove ID",
		Short: "Retire a key; secrets it sealed can no longer be opened",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			k, err := keyring.Load(path())
			if err != nil {
				return failf("%v", err)
			}
			if err := k.Remove(args[0]); err != nil {
				return failf("remove key %s: %v", args[0], err)
			}
			fmt.Fprintf(g.stdout, "removed key %s from %s\n", args[0], path())
			return nil
		},
	}
	create := &cobra.Command{
		Use:   "create",
		Short: "Make a new keyring file, to copy to every server before the cell's first start",
		Long: `Make a new keyring with one key, for a cell about to be installed: copy the
file to every server's data dir (or --keyring-file) before the servers first
start, so that all hold the same keys (docs/install.md). An existing file is
never overwritten.`,
		Example: "  strata keyring create --keyring-file keyring.json",
		Args:    cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if fileExists(path()) {
				return failf("%s exists: a keyring is there already (strata keyring rotate adds a key)", path())
			}
			if err := os.MkdirAll(filepath.Dir(path()), 0o700); err != nil {
				return failf("%v", err)
			}
			k, err := keyring.LoadOrCreate(path())
			if err != nil {
				return failf("%v", err)
			}
			fmt.Fprintf(g.stdout, "keyring %s with key %s; copy it to every server of the cell (0600)\n", path(), k.Keys()[0].ID)
			return nil
		},
	}
	cmd.AddCommand(create, list, rotate, remove)
	return cmd
}
