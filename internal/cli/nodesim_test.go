package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-dev/strata/internal/nodesim"
	"github.com/strata-dev/strata/internal/pki"
	"github.com/strata-dev/strata/internal/server"
	"github.com/strata-dev/strata/internal/server/servertest"
)

// nodesimRun runs `strata nodesim ARGS -o json` for a short while and
// returns its totals.
func nodesimRun(t *testing.T, args ...string) nodesim.Snapshot {
	t.Helper()
	out, errOut, code := runCLI(append([]string{"nodesim", "--duration", "3s", "--progress-every", "0", "-o", "json"}, args...)...)
	if code != 0 {
		t.Fatalf("nodesim %v: exit %d\nstdout: %s\nstderr: %s", args, code, out, errOut)
	}
	var st nodesim.Snapshot
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("nodesim -o json: %v\n%s", err, out)
	}
	return st
}

// clearNodesimEnv keeps the caller's environment out of a test.
func clearNodesimEnv(t *testing.T) {
	for _, k := range []string{"STRATA_JOIN_TOKEN", "STRATA_TLS_CA", "STRATA_TLS_CERT", "STRATA_TLS_KEY", "STRATA_INSECURE_PLAINTEXT", "STRATA_ADDR"} {
		t.Setenv(k, "")
	}
}

// Run from the directory a dev cell was started in, nodesim finds the
// cell's credentials as the CLI does: its CA and agent certificate in
// strata-data/tls and its join token in strata-data/server (it stopped
// with "no TLS: give --tls-ca…" against `strata dev`).
func TestNodesimFindsADevCellsCredentials(t *testing.T) {
	clearNodesimEnv(t)
	dir := t.TempDir()
	tlsDir := devTLSDir(filepath.Join(dir, devDataDir))
	if err := pki.EnsureDev(tlsDir); err != nil {
		t.Fatal(err)
	}
	srvFiles := pki.CertFiles(tlsDir, pki.RoleServer)
	cell := servertest.Start(t, 1, func(_ int, c *server.Config) { c.TLS = &srvFiles })
	cell.WaitReady(0)
	serverDir := filepath.Join(dir, devDataDir, "server")
	if err := os.MkdirAll(serverDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(serverDir, "join-token"), []byte(cell.JoinToken()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	st := nodesimRun(t, "--servers", cell.Addr(0), "--count", "3", "--watch=false")
	if st.Registered != 3 {
		t.Fatalf("%d of 3 nodes registered with the dev cell's credentials (%+v)", st.Registered, st.RegisterFailures)
	}
}

// A second run with the same prefix brings the same nodes back, as its
// help promises: the nodes' secrets are kept per prefix (before, 0 of the
// nodes registered again: "node sim-000000 is registered by another
// agent"). Another prefix is other nodes.
func TestNodesimBringsTheSameNodesBack(t *testing.T) {
	clearNodesimEnv(t)
	cell := servertest.Start(t, 1, nil)
	cell.WaitReady(0)
	t.Chdir(t.TempDir())
	args := []string{"--servers", cell.Addr(0), "--insecure-plaintext", "--join-token", cell.JoinToken(), "--count", "4", "--watch=false"}
	for run := 1; run <= 2; run++ {
		if st := nodesimRun(t, args...); st.Registered != 4 || st.RegisterErrors != 0 {
			t.Fatalf("run %d: %d of 4 registered, %d errors %+v", run, st.Registered, st.RegisterErrors, st.RegisterFailures)
		}
	}
	if st := nodesimRun(t, append(args, "--prefix", "other")...); st.Registered != 4 {
		t.Fatalf("another prefix: %d of 4 registered", st.Registered)
	}
	nodes, _, err := cell.Client().Nodes(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range nodes {
		names = append(names, n.ID)
	}
	if len(nodes) != 8 || !strings.Contains(strings.Join(names, ","), "other-000003") {
		t.Fatalf("nodes %v: want sim-000000..3 and other-000000..3", names)
	}
}
