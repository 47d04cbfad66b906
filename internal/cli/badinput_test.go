package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/server/servertest"
)

// badGroup is a workload whose one group is body (indented under
// "- name: g"), with a task that serves a port "http" when the body does
// not bring its own tasks.
func badGroup(body string) string {
	doc := `apiVersion: strata.dev/v1
kind: Workload
metadata: {name: bad}
spec:
  groups:
    - name: g
` + body
	if !strings.Contains(body, "tasks:") {
		doc += `      tasks:
        - {name: t, driver: mock, command: ["x"], resources: {cpu: 100m, memory: 64Mi}}
`
	}
	return doc
}

// TestBadUpdatesChecksAndPortsAreRefusedEverywhere is the issue's "bad
// input" list: update blocks that cannot work, negative values, checks
// and services without a port, ports asked twice or out of range. Each is
// refused by `strata validate`, `strata plan` and `strata run` with the
// field's path, by the API too (the CLI is not the only client), and
// nothing is written: no workload, no version, no evaluation.
func TestBadUpdatesChecksAndPortsAreRefusedEverywhere(t *testing.T) {
	const g = "spec.groups[0]."
	task := func(checks string) string {
		return `      ports: [{name: http}]
      tasks:
        - name: t
          driver: mock
          command: ["x"]
          resources: {cpu: 100m, memory: 64Mi}
          checks: [` + checks + `]
`
	}
	tests := []struct {
		name string
		body string
		path string // the field the error names
	}{
		{"canary larger than replicas", "      replicas: 2\n      update: {canary: 3}\n", g + "update.canary"},
		{"healthyDeadline shorter than minHealthyTime", "      update: {minHealthyTime: 30s, healthyDeadline: 10s}\n", g + "update.healthyDeadline"},
		{"healthyDeadline equal to minHealthyTime", "      update: {minHealthyTime: 30s, healthyDeadline: 30s}\n", g + "update.healthyDeadline"},
		{"minHealthyTime above the default healthyDeadline", "      update: {minHealthyTime: 6m}\n", g + "update.minHealthyTime"},
		{"progressDeadline shorter than healthyDeadline", "      update: {healthyDeadline: 1m, progressDeadline: 30s}\n", g + "update.progressDeadline"},
		{"autoPromote without canaries", "      update: {autoPromote: true}\n", g + "update.autoPromote"},
		{"negative maxParallel", "      update: {maxParallel: -1}\n", g + "update.maxParallel"},
		{"zero maxParallel", "      update: {maxParallel: 0}\n", g + "update.maxParallel"},
		{"negative canary", "      update: {canary: -1}\n", g + "update.canary"},
		{"negative minHealthyTime", "      update: {minHealthyTime: -1s}\n", g + "update.minHealthyTime"},
		{"negative healthyDeadline", "      update: {healthyDeadline: -5m}\n", g + "update.healthyDeadline"},
		{"negative progressDeadline", "      update: {progressDeadline: -1m}\n", g + "update.progressDeadline"},
		{"negative stagger", "      update: {stagger: -1s}\n", g + "update.stagger"},
		{"negative maxUnavailable", "      disruption: {maxUnavailable: -1}\n", g + "disruption.maxUnavailable"},
		{"negative replicas", "      replicas: -1\n", g + "replicas"},
		{"negative shutdownDelay", "      shutdownDelay: -1s\n", g + "shutdownDelay"},
		{"shutdownDelay above its maximum", "      shutdownDelay: 1h\n", g + "shutdownDelay"},
		{"http check without a port", task("{name: c, type: http, path: /}"), g + "tasks[0].checks[0].port"},
		{"tcp check without a port", task("{name: c, type: tcp}"), g + "tasks[0].checks[0].port"},
		{"check on a port the group does not have", task("{name: c, type: tcp, port: admin}"), g + "tasks[0].checks[0].port"},
		{"check timeout longer than its interval", task("{name: c, type: tcp, port: http, interval: 1s, timeout: 2s}"), g + "tasks[0].checks[0].timeout"},
		{"negative check interval", task("{name: c, type: tcp, port: http, interval: -1s}"), g + "tasks[0].checks[0].interval"},
		{"service without a port", "      ports: [{name: http}]\n      services: [{name: web}]\n", g + "services[0].port"},
		{"service on a port the group does not have", "      ports: [{name: http}]\n      services: [{name: web, port: admin}]\n", g + "services[0].port"},
		{"static port asked twice", "      ports: [{name: a, static: 8080}, {name: b, static: 8080}]\n", g + "ports[1].static"},
		{"static port above 65535", "      ports: [{name: a, static: 70000}]\n", g + "ports[0].static"},
		{"negative static port", "      ports: [{name: a, static: -1}]\n", g + "ports[0].static"},
	}

	c := servertest.Start(t, 1, nil)
	c.Leader()
	ctx := context.Background()
	if err := c.AgentClient("n1").RegisterNode(ctx, &api.Node{ID: "n1", Name: "n1", Capacity: api.Resources{CPUMilli: 4000, MemoryBytes: 4 << 30}}); err != nil {
		t.Fatal(err)
	}
	client := c.Client()
	dir := t.TempDir()
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc := badGroup(tc.body)
			file := filepath.Join(dir, fmt.Sprintf("bad%d.yaml", i))
			if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{
				{"validate", "-f", file},
				{"--addr", c.Addr(0), "plan", "-f", file},
				{"--addr", c.Addr(0), "run", "-f", file},
			} {
				out, errOut, code := runCLI(args...)
				if code == 0 || !strings.Contains(errOut, tc.path) {
					t.Errorf("strata %s: exit %d, want a refusal naming %s\nstdout: %s\nstderr: %s", args[len(args)-3], code, tc.path, out, errOut)
				}
			}
			// The API refuses it too, naming the field.
			for what, call := range map[string]func() error{
				"register": func() error { _, err := client.RegisterWorkload(ctx, []byte(doc)); return err },
				"plan":     func() error { _, err := client.PlanWorkload(ctx, []byte(doc)); return err },
			} {
				var apiErr *api.Error
				err := call()
				if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 ||
					!slices.ContainsFunc(apiErr.Fields, func(f api.FieldError) bool { return f.Path == tc.path }) {
					t.Errorf("API %s: %v, want 400 naming %s", what, err, tc.path)
				}
			}
		})
	}
	// Nothing was written by any of them.
	list, _, err := client.Workloads(ctx, nil)
	if err != nil || len(list) != 0 {
		t.Fatalf("workloads after only bad input: %d, %v", len(list), err)
	}
	if _, _, err := client.WorkloadVersions(ctx, "bad", nil); err == nil {
		t.Fatalf("versions of a workload never accepted: no error")
	}
	evals, err := client.Evaluations(ctx)
	if err != nil || len(evals) != 0 {
		t.Fatalf("evaluations after only bad input: %d, %v", len(evals), err)
	}
}

// TestStaticPortTakenOnEveryNode: a static port that every node's
// allocations already hold is not bad input (it may be free in a minute)
// but a placement that fails: `strata plan` shows it with the port, exits
// 1 and writes nothing, and `strata run --wait` fails with the same reason while
// the workload waits, blocked, for the port.
func TestStaticPortTakenOnEveryNode(t *testing.T) {
	c := servertest.Start(t, 1, nil)
	c.Leader()
	ctx := context.Background()
	agent := c.AgentClient("n1")
	if err := agent.RegisterNode(ctx, &api.Node{ID: "n1", Name: "n1", Capacity: api.Resources{CPUMilli: 4000, MemoryBytes: 4 << 30}}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name+".yaml")
		if err := os.WriteFile(p, []byte(strings.Replace(badGroup(body), "name: bad", "name: "+name, 1)), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	port := "      ports: [{name: http, static: 8080}]\n"
	strata := func(args ...string) (string, string, int) {
		return runCLI(append([]string{"--addr", c.Addr(0)}, args...)...)
	}
	if out, errOut, code := strata("run", "-f", write("holder", port)); code != 0 {
		t.Fatalf("run holder: exit %d %s %s", code, out, errOut)
	}
	servertest.Eventually(t, 10e9, "the holder runs", func() error {
		allocs, _, err := c.Client().Allocations(ctx, "holder", nil)
		if err != nil || len(allocs) != 1 {
			return fmt.Errorf("%d allocations, %v", len(allocs), err)
		}
		return agent.UpdateAllocations(ctx, []*api.AllocUpdate{{ID: allocs[0].ID, ClientStatus: api.AllocRunning}})
	})
	second := write("second", port)
	out, errOut, code := strata("plan", "-f", second)
	if code != 1 || !strings.Contains(out, "cannot place 1 of g: 1 node: port 8080 already in use") || !strings.Contains(errOut, "would not be placed") {
		t.Fatalf("plan: exit %d, want the placement failure with its port\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if list, _, _ := c.Client().Workloads(ctx, nil); len(list) != 1 {
		t.Fatalf("plan wrote a workload: %d listed", len(list))
	}
	out, errOut, code = strata("run", "-f", second, "--wait", "--timeout", "10s")
	if code == 0 || !strings.Contains(errOut, "port 8080 already in use") {
		t.Fatalf("run --wait: exit %d, want the placement failure with its port\nstdout: %s\nstderr: %s", code, out, errOut)
	}
}
