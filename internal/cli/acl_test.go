package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/server"
	"github.com/strata-dev/strata/internal/server/servertest"
)

// TestACLCommands is the ACL story through the CLI: bootstrap, a policy,
// a token of it, what the token may and may not do, revocation.
func TestACLCommands(t *testing.T) {
	t.Parallel()
	c := servertest.Start(t, 1, func(_ int, cfg *server.Config) { cfg.ACL = true })
	c.WaitReady(0)
	addr := c.Addr(0)
	cli := func(token string, args ...string) (string, string, int) {
		return runCLI(append([]string{"--addr", addr, "--token", token}, args...)...)
	}
	out, errOut, code := runCLI("--addr", addr, "acl", "bootstrap", "-o", "json")
	var root api.ACLToken
	if code != 0 || json.Unmarshal([]byte(out), &root) != nil || len(root.SecretID) != 64 || !root.Management {
		t.Fatalf("bootstrap: exit %d %s %s", code, out, errOut)
	}
	if _, errOut, code := runCLI("--addr", addr, "acl", "bootstrap"); code == 0 || !strings.Contains(errOut, "already bootstrapped") {
		t.Fatalf("second bootstrap: exit %d %s", code, errOut)
	}
	policy := filepath.Join(t.TempDir(), "reader.yaml")
	os.WriteFile(policy, []byte("name: reader\nnamespaces:\n  default: [read]\ncell: [read]\n"), 0o644)
	if out, errOut, code := cli(root.SecretID, "acl", "policy", "apply", "-f", policy); code != 0 || !strings.Contains(out, "policy reader applied") {
		t.Fatalf("policy apply: exit %d %s %s", code, out, errOut)
	}
	out, errOut, code = cli(root.SecretID, "acl", "token", "create", "--name", "ci", "--policy", "reader", "--ttl", "1h", "-o", "json")
	var reader api.ACLToken
	if code != 0 || json.Unmarshal([]byte(out), &reader) != nil || reader.SecretID == "" || reader.ExpiresAt == nil {
		t.Fatalf("token create: exit %d %s %s", code, out, errOut)
	}
	out, _, code = cli(root.SecretID, "acl", "token", "list", "-o", "json")
	var list []api.ACLToken
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list) != 2 || strings.Contains(out, reader.SecretID) {
		t.Fatalf("token list: exit %d %s", code, out)
	}
	if _, errOut, code := runCLI("--addr", addr, "nodes"); code == 0 || !strings.Contains(errOut, "needs a token") {
		t.Fatalf("nodes without a token: exit %d %s", code, errOut)
	}
	if out, errOut, code := cli(reader.SecretID, "nodes", "-o", "json"); code != 0 {
		t.Fatalf("nodes as a reader: exit %d %s %s", code, out, errOut)
	}
	if _, errOut, code := cli(reader.SecretID, "run", "-f", repoFile(t, "examples/hello.yaml")); code == 0 || !strings.Contains(errOut, `lacks capability "submit"`) {
		t.Fatalf("run as a reader: exit %d %s", code, errOut)
	}
	if _, errOut, code := cli(root.SecretID, "acl", "token", "revoke", reader.AccessorID); code != 0 {
		t.Fatalf("revoke: exit %d %s", code, errOut)
	}
	if _, errOut, code := cli(reader.SecretID, "nodes"); code == 0 || !strings.Contains(errOut, "was revoked") {
		t.Fatalf("nodes with a revoked token: exit %d %s", code, errOut)
	}
	// The refused run is in the audit log, under the token's name.
	servertest.Eventually(t, 10*time.Second, "the refused run in the audit log", func() error {
		out, errOut, code := cli(root.SecretID, "audit", "--who", "ci", "--since", "1h", "-o", "json")
		var entries []api.AuditEntry
		if code != 0 || json.Unmarshal([]byte(out), &entries) != nil {
			return fmt.Errorf("exit %d %s %s", code, out, errOut)
		}
		if len(entries) != 1 || entries[0].Path != "/v1/workloads" || entries[0].Result != "acl-denied" {
			return fmt.Errorf("entries %+v", entries)
		}
		return nil
	})
}
