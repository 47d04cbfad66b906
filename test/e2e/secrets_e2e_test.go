package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestSecretsReachTheTaskOnly runs a workload with a secret file and a
// secret env entry on a real cell: the task (as nobody, in its own
// namespaces) reads both, and no CLI output shows either value.
func TestSecretsReachTheTaskOnly(t *testing.T) {
	c := newCell(t, 10*time.Second)
	c.startAgent("n1")
	spec := c.writeSpec("vault", `
apiVersion: strata.dev/v1
kind: Workload
metadata:
  name: vault
spec:
  groups:
    - name: main
      tasks:
        - name: app
          command: ["/bin/sh", "-c", "echo \"uid=$(id -u) file=$(cat $STRATA_SECRETS_DIR/api-key) env=$DB_PASSWORD\"; exec sleep 3600"]
          env:
            DB_PASSWORD: {secret: env-value-7272}
          secrets:
            - {name: api-key, value: file-value-5151}
          resources: {cpu: 100m, memory: 32Mi}
`)
	c.mustStrata("run", "-f", spec, "--wait", "--timeout", "60s")
	allocs := runningAllocs(c.allocs("vault"))
	if len(allocs) != 1 {
		t.Fatalf("want 1 running allocation, got %d", len(allocs))
	}
	c.eventually(20*time.Second, "the task reads its secrets", func() error {
		out, _, code := c.strata("logs", allocs[0].ID[:8])
		// The task prints what it got into its own log.
		if code != 0 || !strings.Contains(out, "uid=65534 file=file-value-5151 env=env-value-7272") {
			return fmt.Errorf("logs exit %d: %q", code, out)
		}
		return nil
	})
	for _, args := range [][]string{
		{"status", "vault"}, {"status", "vault", "-o", "json"}, {"allocs", "vault", "-o", "json"},
		{"validate", "-f", spec, "-o", "json"},
	} {
		out := c.mustStrata(args...)
		if strings.Contains(out, "file-value-5151") || strings.Contains(out, "env-value-7272") {
			t.Errorf("strata %v shows a secret:\n%s", args, out)
		}
	}
	c.mustStrata("stop", "vault")
}
