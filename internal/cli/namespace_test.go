package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/server/servertest"
)

// TestNamespaceCommands is the tenants' story through the CLI: a
// namespace with a quota, a workload run in it with -n, its usage in
// `quota show -o json`, a workload above the quota's priority refused with
// the field, deletion refused while it holds a workload, then allowed.
func TestNamespaceCommands(t *testing.T) {
	t.Parallel()
	c := servertest.Start(t, 1, nil)
	c.WaitReady(0)
	addr := c.Addr(0)
	cli := func(args ...string) (string, string, int) {
		return runCLI(append([]string{"--addr", addr}, args...)...)
	}
	dir := t.TempDir()
	nsFile := filepath.Join(dir, "team-a.yaml")
	// A quota in a workload's units; a size without one is refused with
	// the two readings, a misspelt field with the name it stands for.
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("name: team-a\nquota:\n  memory: 64\n  cpus: 2\n"), 0o644)
	if _, errOut, code := cli("namespace", "apply", "-f", bad); code != 1 || !strings.Contains(errOut, "quota.memory: 64 has no unit: write 64Mi") ||
		!strings.Contains(errOut, `quota.cpus: unknown field (did you mean "cpu"?)`) {
		t.Fatalf("namespace apply of a bad file: exit %d %s", code, errOut)
	}
	os.WriteFile(nsFile, []byte("name: team-a\nquota:\n  cpu: 500m\n  memory: 1Gi\n  allocations: 2\n  maxPriority: 999\n"), 0o644)
	if out, errOut, code := cli("namespace", "apply", "-f", nsFile); code != 0 || !strings.Contains(out, "namespace team-a applied") {
		t.Fatalf("namespace apply: exit %d %s %s", code, out, errOut)
	}
	if out, errOut, code := cli("-n", "team-a", "run", "-f", repoFile(t, "examples/hello.yaml")); code != 0 {
		t.Fatalf("run -n team-a: exit %d %s %s", code, out, errOut)
	}
	out, errOut, code := cli("quota", "show", "team-a", "-o", "json")
	var st api.NamespaceStatus
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil {
		t.Fatalf("quota show: exit %d %s %s", code, out, errOut)
	}
	if st.Workloads != 1 || st.Quota == nil || *st.Quota.CPUMilli != 500 || *st.Quota.MemoryBytes != 1<<30 {
		t.Fatalf("quota show: %+v", st)
	}
	out, _, code = cli("namespace", "list", "-o", "json")
	var list []api.NamespaceStatus
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list) != 2 || list[0].Name != "default" || list[1].Name != "team-a" {
		t.Fatalf("namespace list: exit %d %s", code, out)
	}
	if out, _, code := cli("namespace", "list"); code != 0 || !strings.Contains(out, "/500m") || !strings.Contains(out, "/1GiB") || !strings.Contains(out, "999") {
		t.Fatalf("namespace list (table): exit %d %s", code, out)
	}
	// The default namespace does not see team-a's workload.
	if out, _, code := cli("status", "-o", "json"); code != 0 || strings.Contains(out, "hello") {
		t.Fatalf("status in default: exit %d %s", code, out)
	}
	prod := filepath.Join(dir, "prod.yaml")
	os.WriteFile(prod, []byte("apiVersion: strata.dev/v1\nkind: Workload\nmetadata: {name: prod, namespace: team-a}\nspec:\n  priorityClass: production\n  groups:\n    - name: g\n      tasks:\n        - {name: t, command: [x], resources: {cpu: 100m, memory: 32Mi}}\n"), 0o644)
	if _, errOut, code := cli("run", "-f", prod); code == 0 || !strings.Contains(errOut, "spec.priority") || !strings.Contains(errOut, "maxPriority 999") {
		t.Fatalf("production in team-a: exit %d %s", code, errOut)
	}
	if _, errOut, code := cli("namespace", "delete", "team-a"); code == 0 || !strings.Contains(errOut, "holds 1 workload") {
		t.Fatalf("delete a namespace with a workload: exit %d %s", code, errOut)
	}
	if _, errOut, code := cli("-n", "team-a", "stop", "hello", "--purge"); code != 0 {
		t.Fatalf("stop --purge: exit %d %s", code, errOut)
	}
	if out, errOut, code := cli("namespace", "delete", "team-a"); code != 0 || !strings.Contains(out, "deleted") {
		t.Fatalf("delete an empty namespace: exit %d %s %s", code, out, errOut)
	}
}
