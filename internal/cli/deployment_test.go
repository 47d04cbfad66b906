package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/server/servertest"
)

func webSpec(cmd string, replicas int) string {
	return fmt.Sprintf(`apiVersion: strata.dev/v1
kind: Workload
metadata: {name: web}
spec:
  groups:
    - name: g
      replicas: %d
      update: {minHealthyTime: 1h, healthyDeadline: 2h, progressDeadline: 3h}
      tasks:
        - {name: t, driver: mock, command: [%q], resources: {cpu: 100m, memory: 64Mi}}
`, replicas, cmd)
}

// TestDeploymentCommands drives plan, run --check-index, deployment
// list|status|fail, history and revert against a one-server cell.
func TestDeploymentCommands(t *testing.T) {
	c := servertest.Start(t, 1, nil)
	c.Leader()
	ctx := context.Background()
	agent := c.AgentClient("n1")
	if err := agent.RegisterNode(ctx, &api.Node{ID: "n1", Name: "n1", Capacity: api.Resources{CPUMilli: 4000, MemoryBytes: 4 << 30}}); err != nil {
		t.Fatal(err)
	}
	strata := func(args ...string) (string, string, int) {
		return runCLI(append([]string{"--addr", c.Addr(0)}, args...)...)
	}
	dir := t.TempDir()
	file := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	v1, v2, scaled := file("v1.yaml", webSpec("v1", 2)), file("v2.yaml", webSpec("v2", 2)), file("scaled.yaml", webSpec("v1", 3))

	if out, errOut, code := strata("run", "-f", v1); code != 0 {
		t.Fatalf("run v1: exit %d %s %s", code, out, errOut)
	}
	servertest.Eventually(t, 10e9, "v1 placed and running", func() error {
		allocs, _, err := c.Client().Allocations(ctx, "web", nil)
		if err != nil || len(allocs) != 2 {
			return fmt.Errorf("%d allocations, %v", len(allocs), err)
		}
		for _, a := range allocs {
			if a.ClientStatus == api.AllocPending {
				if err := agent.UpdateAllocations(ctx, []*api.AllocUpdate{{ID: a.ID, ClientStatus: api.AllocRunning}}); err != nil {
					return err
				}
			}
		}
		return nil
	})

	out, errOut, code := strata("plan", "-f", scaled)
	if code != 0 || !strings.Contains(out, "~ groups.g.replicas: 2 => 3 (in place)") || strings.Contains(out, "starts a deployment") {
		t.Fatalf("plan of a scale-up: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = strata("plan", "-f", v2, "-o", "json")
	var plan api.PlanResponse
	if code != 0 || json.Unmarshal([]byte(out), &plan) != nil {
		t.Fatalf("plan -o json: exit %d %s %s", code, out, errOut)
	}
	if plan.Deployment == nil || plan.CheckIndex == 0 || len(plan.Groups) != 1 || plan.Groups[0].Place != 1 || plan.Groups[0].Stop != 0 {
		t.Fatalf("plan of a destructive update: %+v", plan)
	}
	if out, _, code := strata("plan", "-f", v2); code != 0 || !strings.Contains(out, "(replaces allocations)") || !strings.Contains(out, fmt.Sprintf("--check-index %d", plan.CheckIndex)) {
		t.Fatalf("plan: exit %d\n%s", code, out)
	}

	if _, errOut, code := strata("run", "-f", v2, "--check-index", fmt.Sprint(plan.CheckIndex+1)); code != 1 || !strings.Contains(errOut, "changed") {
		t.Fatalf("run with a stale check index: exit %d, stderr %s", code, errOut)
	}
	out, errOut, code = strata("run", "-f", v2, "--check-index", fmt.Sprint(plan.CheckIndex))
	if code != 0 || !strings.Contains(out, "version 2") || !strings.Contains(out, "deployment ") {
		t.Fatalf("run --check-index: exit %d %s %s", code, out, errOut)
	}

	out, errOut, code = strata("deployment", "list", "-o", "json")
	var ds []*api.Deployment
	if code != 0 || json.Unmarshal([]byte(out), &ds) != nil || len(ds) != 1 || ds[0].Version != 2 {
		t.Fatalf("deployment list -o json: exit %d %s %s", code, out, errOut)
	}
	id := ds[0].ID
	if out, _, code := strata("deployment", "status", id[:8]); code != 0 || !strings.Contains(out, "version 1 → 2") || !strings.Contains(out, "OLD RUNNING") {
		t.Fatalf("deployment status: exit %d\n%s", code, out)
	}
	if out, _, code := strata("deployment", "list"); code != 0 || !strings.Contains(out, "1→2") {
		t.Fatalf("deployment list: exit %d\n%s", code, out)
	}
	if _, errOut, code := strata("deployment", "promote", id); code != 1 || !strings.Contains(errOut, "no canaries") {
		t.Fatalf("promote without canaries: exit %d %s", code, errOut)
	}
	if out, errOut, code := strata("deployment", "fail", id, "--reason", "too slow"); code != 0 || !strings.Contains(out, "failed") {
		t.Fatalf("deployment fail: exit %d %s %s", code, out, errOut)
	}
	if _, errOut, code := strata("deployment", "status", id, "--watch"); code != 1 || !strings.Contains(errOut, "too slow") {
		t.Fatalf("status --watch of a failed deployment: exit %d %s", code, errOut)
	}

	out, errOut, code = strata("history", "web", "-o", "json")
	var vs []*api.WorkloadVersion
	if code != 0 || json.Unmarshal([]byte(out), &vs) != nil || len(vs) != 2 || !vs[0].Stable || vs[1].Stable {
		t.Fatalf("history -o json: exit %d %s %s", code, out, errOut)
	}
	if out, _, code := strata("history", "web"); code != 0 || !strings.Contains(out, "STABLE") {
		t.Fatalf("history: exit %d\n%s", code, out)
	}
	if out, errOut, code := strata("revert", "web", "1"); code != 0 || !strings.Contains(out, "version 3 registered from version 1") {
		t.Fatalf("revert: exit %d %s %s", code, out, errOut)
	}
	if _, errOut, code := strata("revert", "web", "9"); code != 1 || !strings.Contains(errOut, "version not kept") {
		t.Fatalf("revert to an unknown version: exit %d %s", code, errOut)
	}
}
