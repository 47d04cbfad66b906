package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/server/servertest"
)

// TestNodeCommands drives `strata node ...` and `strata nodes` against a
// one-server cell with one registered node: each operation says what it
// did, -o json answers with the node, and refusals name the problem.
func TestNodeCommands(t *testing.T) {
	c := servertest.Start(t, 1, nil)
	addr := c.Addr(c.Leader())
	n := &api.Node{ID: "node-1", Name: "n1", Status: api.NodeReady, Capacity: api.Resources{CPUMilli: 4000, MemoryBytes: 8 << 30}}
	agent := c.Client()
	agent.Node = c.NodeIdentity(n.ID)
	if err := agent.RegisterNode(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  string
		wantErr  string
	}{
		{"cordon", []string{"node", "eligibility", "n1", "--disable"}, 0, "node n1: ineligible; status ready, ineligible", ""},
		{"listing shows it", []string{"nodes"}, 0, "ineligible", ""},
		{"both flags", []string{"node", "eligibility", "n1", "--enable", "--disable"}, 1, "", "one of --enable and --disable"},
		{"uncordon", []string{"node", "eligibility", "n1", "--enable"}, 0, "eligible", ""},
		{"bad deadline", []string{"node", "drain", "n1", "--deadline", "-1m"}, 1, "", "deadline"},
		{"drain an empty node and watch it finish", []string{"node", "drain", "n1", "--watch", "--deadline", "10m"}, 0, "drain of n1 done", ""},
		{"status after the drain", []string{"node", "status", "n1"}, 0, "eligibility:  ineligible", ""},
		{"quarantine needs a reason", []string{"node", "quarantine", "n1"}, 1, "", "reason"},
		{"quarantine", []string{"node", "quarantine", "n1", "--reason", "ecc errors"}, 0, "status quarantined", ""},
		{"status shows the quarantine", []string{"node", "status", "n1"}, 0, "quarantine:   ecc errors", ""},
		{"lift", []string{"node", "quarantine", "n1", "--lift"}, 0, "quarantine lifted; status ready, eligible", ""},
		{"purge of a live node is refused", []string{"node", "purge", "n1"}, 1, "", "purge is for dead nodes"},
		{"unknown node", []string{"node", "status", "nope"}, 1, "", "not found"},
	}
	for _, s := range steps {
		out, errOut, code := runCLI(append([]string{"--addr", addr}, s.args...)...)
		if code != s.wantCode || !strings.Contains(out, s.wantOut) || !strings.Contains(errOut, s.wantErr) {
			t.Fatalf("%s: exit %d (want %d)\nstdout: %s\nstderr: %s", s.name, code, s.wantCode, out, errOut)
		}
	}
	out, _, code := runCLI("--addr", addr, "node", "status", "n1", "-o", "json")
	var st api.NodeStatus
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || st.Node.Name != "n1" || st.Node.Eligibility != api.NodeEligible {
		t.Fatalf("node status -o json: exit %d: %s", code, out)
	}
	out, _, code = runCLI("--addr", addr, "node", "eligibility", "n1", "--disable", "-o", "json")
	var resp api.NodeOpResponse
	if code != 0 || json.Unmarshal([]byte(out), &resp) != nil || resp.Node.Eligibility != api.NodeIneligible || resp.Index == 0 {
		t.Fatalf("node eligibility -o json: exit %d: %s", code, out)
	}
}
