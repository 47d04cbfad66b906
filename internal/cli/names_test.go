package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/server/servertest"
)

// TestNodeNamesAndIDs is the story: two agents started on one
// machine without --name get names of their own (the host's, and the
// host's with a suffix); the 8-character ids `strata nodes` prints are
// accepted back; and a name two nodes were given on purpose is refused,
// listing both, instead of cordoning one of them.
func TestNodeNamesAndIDs(t *testing.T) {
	t.Parallel()
	c := servertest.Start(t, 1, nil)
	c.WaitReady(0)
	addr := c.Addr(0)
	cli := func(args ...string) (string, string, int) {
		return runCLI(append([]string{"--addr", addr}, args...)...)
	}
	dirs := []string{t.TempDir(), t.TempDir()}
	for _, dir := range dirs {
		startAgentIn(t, c, dir, "")
	}
	var nodes []api.Node
	servertest.Eventually(t, 20*time.Second, "two agents registered", func() error {
		out, errOut, code := cli("nodes", "-o", "json")
		nodes = nil
		if code != 0 || json.Unmarshal([]byte(out), &nodes) != nil || len(nodes) != 2 {
			return fmt.Errorf("exit %d %s %s", code, out, errOut)
		}
		return nil
	})
	host, _ := os.Hostname()
	want := hostNodeName(host)
	names := []string{nodes[0].Name, nodes[1].Name}
	slices.Sort(names)
	if names[0] != want || !strings.HasPrefix(names[1], want+"-") {
		t.Fatalf("default names %q, want %q and %q-<id>", names, want, want)
	}
	renamed := 0
	for _, dir := range dirs {
		if b, err := os.ReadFile(filepath.Join(dir, nodeNameFile)); err == nil && strings.TrimSpace(string(b)) == names[1] {
			renamed++
		}
	}
	if renamed != 1 {
		t.Fatalf("the chosen name is not kept in the renamed agent's data dir (%d)", renamed)
	}

	// Every id a listing prints is accepted back.
	short := shortID(nodes[0].ID)
	if out, errOut, code := cli("node", "status", short); code != 0 || !strings.Contains(out, nodes[0].ID) {
		t.Fatalf("node status %s: exit %d %s %s", short, code, out, errOut)
	}
	if out, errOut, code := cli("node", "eligibility", short, "--disable"); code != 0 || !strings.Contains(out, "ineligible") {
		t.Fatalf("node eligibility %s: exit %d %s %s", short, code, out, errOut)
	}

	// Two nodes registered under one name on purpose: a command that
	// names it refuses and lists both; neither is touched.
	for _, id := range []string{"twin-aaaa1111", "twin-bbbb2222"} {
		agent := c.Client()
		agent.Node = c.NodeIdentity(id)
		n := &api.Node{ID: id, Name: "twin", Status: api.NodeReady, Capacity: api.Resources{CPUMilli: 1000, MemoryBytes: 1 << 30}}
		if err := agent.RegisterNode(context.Background(), n); err != nil {
			t.Fatal(err)
		}
	}
	_, errOut, code := cli("node", "eligibility", "twin", "--disable")
	if code != 1 || !strings.Contains(errOut, `node name "twin" is ambiguous: 2 nodes have it`) ||
		!strings.Contains(errOut, "twin-aaaa1111") || !strings.Contains(errOut, "twin-bbbb2222") {
		t.Fatalf("an ambiguous name: exit %d %s", code, errOut)
	}
	out, _, _ := cli("nodes")
	if strings.Count(out, "ineligible") != 1 {
		t.Fatalf("the refused command changed a node:\n%s", out)
	}
	if _, errOut, code := cli("node", "status", "twin-b"); code != 0 {
		t.Fatalf("a unique prefix: exit %d %s", code, errOut)
	}
	if _, errOut, code := cli("node", "drain", "twin-", "--deadline", "1m"); code != 1 || !strings.Contains(errOut, `node id prefix "twin-" is ambiguous`) {
		t.Fatalf("an ambiguous prefix: exit %d %s", code, errOut)
	}
}

// startAgentIn runs an agent as `strata agent --servers` with its data in
// dir; name "" leaves the node's name to the agent.
func startAgentIn(t *testing.T, c *servertest.Cell, dir, name string) {
	t.Helper()
	af := agentFlags{name: name, cpuTotal: "2000", memoryTotal: "2GiB", httpAddr: "127.0.0.1:0", joinToken: c.JoinToken(),
		tls: tlsFlags{plaintext: true}}
	cfg, err := af.agentConfig(dir, c.Addrs(), servertest.Logger())
	if err != nil {
		t.Fatal(err)
	}
	runTestAgent(t, cfg)
}

// TestAgentWithAWrongJoinToken: an agent whose join token the cell
// refuses stops at once, saying where the right token is, instead of
// retrying its registration for ever.
func TestAgentWithAWrongJoinToken(t *testing.T) {
	t.Parallel()
	c := servertest.Start(t, 1, nil)
	c.WaitReady(0)
	type result struct {
		errOut string
		code   int
	}
	done := make(chan result, 1)
	go func() {
		_, errOut, code := runCLI("agent", "--servers", c.Addr(0), "--data-dir", t.TempDir(), "--name", "n1", "--join-token", "not-the-token",
			"--insecure-plaintext", "--agent-http-addr", "127.0.0.1:0", "--cpu-total", "2", "--memory-total", "1GiB")
		done <- result{errOut, code}
	}()
	select {
	case r := <-done:
		if r.code != 1 || !strings.Contains(r.errOut, "wrong join token") || !strings.Contains(r.errOut, "<its data-dir>/join-token") ||
			!strings.Contains(r.errOut, "--join-token-file") {
			t.Fatalf("exit %d: %s", r.code, r.errOut)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the agent is still retrying a join token the cell refused")
	}
}

func TestHostNodeName(t *testing.T) {
	for _, tc := range []struct{ host, want string }{
		{"vm", "vm"},
		{"db-7.eu-west.example.com", "db-7.eu-west.example.com"}, // as agents always named nodes
		{"my host!", "my-host"},
		{"-._", "node"},
	} {
		if got := hostNodeName(tc.host); got != tc.want {
			t.Errorf("hostNodeName(%q) = %q, want %q", tc.host, got, tc.want)
		}
	}
}
