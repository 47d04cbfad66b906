package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
)

// healthServer builds ./healthserver for one test: a task that serves
// /ready on its STRATA_PORT_HTTP. Each test builds its own (go build's
// cache makes the second quick) and removes it when it ends.
func healthServer(t *testing.T) string {
	t.Helper()
	// Tasks run as nobody with private /tmp and /var/tmp: the binary goes
	// where they can see and enter it.
	dir, err := os.MkdirTemp("/var/lib", "strata-e2e-healthserver")
	if err == nil {
		err = os.Chmod(dir, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	bin := filepath.Join(dir, "healthserver")
	build := exec.Command("go", "build", "-o", bin, "./healthserver")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building healthserver: %v\n%s", err, out)
	}
	return bin
}

// servedSpec's check waits initialDelay: on a loaded 2-vCPU machine the
// server may take longer than two check intervals to listen, and run
// --wait fails on an allocation whose readiness check is failing.
const servedSpec = `
apiVersion: strata.dev/v1
kind: Workload
metadata: {name: served}
spec:
  groups:
    - name: web
      ports: [{name: http}]
      services: [{name: served-web, port: http, tags: [e2e]}]
      tasks:
        - name: server
          command: [%q]
          resources: {cpu: 100m, memory: 48Mi}
          checks:
            - {name: ready, type: http, port: http, path: /ready, interval: 200ms, timeout: 100ms, initialDelay: 1s, failureThreshold: 2}
`

// TestHTTPReadinessThenFailure runs a task serving HTTP on a dynamic port
// with a readiness check: run --wait returns once it is healthy, the
// service registry lists it at its port (which answers), and when the
// task starts failing its check the allocation turns unhealthy, leaves the
// registry, and the events say why.
func TestHTTPReadinessThenFailure(t *testing.T) {
	bin := healthServer(t)
	c := newCell(t, 10*time.Second)
	c.startAgent("n1")
	out := c.mustStrata("run", "-f", c.writeSpec("served", fmt.Sprintf(servedSpec, bin)), "--wait", "--timeout", "60s", "--min-healthy", "1s")
	if !strings.Contains(out, "healthy") {
		t.Fatalf("run --wait output: %s", out)
	}
	var eps []api.ServiceEndpoint
	if err := json.Unmarshal([]byte(c.mustStrata("services", "served-web", "-o", "json")), &eps); err != nil {
		t.Fatal(err)
	}
	if len(eps) != 1 || eps[0].Port < api.DynamicPortMin || eps[0].Port > api.DynamicPortMax || eps[0].Address != "127.0.0.1" || eps[0].Tags[0] != "e2e" {
		t.Fatalf("endpoints %+v", eps)
	}
	resp, err := http.Get(fmt.Sprintf("http://%s:%d/ready", eps[0].Address, eps[0].Port))
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET the listed endpoint: %v %v", resp, err)
	}
	resp.Body.Close()

	// The task starts failing its readiness check.
	marker := filepath.Join(c.dir, "agent-n1", "allocs", eps[0].AllocID, "server", "local", "unready") // $STRATA_TASK_DIR
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c.eventually(20*time.Second, "the allocation turns unhealthy", func() error {
		var a api.Allocation
		if err := json.Unmarshal([]byte(c.mustStrata("alloc-status", eps[0].AllocID, "-o", "json")), &a); err != nil {
			return err
		}
		if a.Health == nil || a.Health.Status != api.HealthUnhealthy || len(a.Health.Checks) != 1 || a.Health.Checks[0].Output != "HTTP 503" {
			return fmt.Errorf("health %+v", a.Health)
		}
		return nil
	})
	if err := json.Unmarshal([]byte(c.mustStrata("services", "served-web", "-o", "json")), &eps); err != nil || len(eps) != 0 {
		t.Fatalf("an unhealthy allocation is still listed: %+v %v", eps, err)
	}
	if events := c.mustStrata("events", "--workload", "served"); !strings.Contains(events, "readiness check ready of task server is failing: HTTP 503") {
		t.Fatalf("events do not show the failing check:\n%s", events)
	}
	if status := c.mustStrata("status", "served"); !strings.Contains(status, "readiness check ready: failing, HTTP 503") {
		t.Fatalf("status does not show the failing check:\n%s", status)
	}
	allocs := runningAllocs(c.allocs("served"))
	if len(allocs) != 1 {
		t.Fatalf("want 1 running allocation, got %d", len(allocs))
	}
	if status := c.mustStrata("alloc-status", allocs[0].ID); !strings.Contains(status, "unhealthy") || !strings.Contains(status, "HTTP 503") {
		t.Fatalf("alloc-status:\n%s", status)
	}
}

// TestRunWaitFailsOnACrashAfterStart is the observed defect end to end: a
// task that starts and crashes a second later made run --wait succeed.
func TestRunWaitFailsOnACrashAfterStart(t *testing.T) {
	c := newCell(t, 10*time.Second)
	c.startAgent("n1")
	spec := c.writeSpec("crashy", `
apiVersion: strata.dev/v1
kind: Workload
metadata: {name: crashy}
spec:
  groups:
    - name: main
      restartPolicy: {mode: on-failure, attempts: 5, delay: 1s}
      tasks:
        - name: app
          command: ["/bin/sh", "-c", "sleep 1; exit 3"]
          resources: {cpu: 100m, memory: 32Mi}
`)
	out, errOut, code := c.strata("run", "-f", spec, "--wait", "--timeout", "60s")
	if code == 0 || !strings.Contains(errOut, "exit code 3") {
		t.Fatalf("run --wait of a crashing task: exit %d\n%s\n%s", code, out, errOut)
	}
}
