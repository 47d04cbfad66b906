package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
)

// TestNodeDrainThroughTheCLI drains a real agent's node with `strata node
// drain --watch`: its three replicas move to the other agent (each
// replacement started before its old task is stopped), the node stays
// ineligible, new work avoids it, and enabling it makes it eligible again.
func TestNodeDrainThroughTheCLI(t *testing.T) {
	c := newCell(t, 10*time.Second)
	// Stop-and-replace moves: with a working criu the drain would migrate
	// these exec tasks instead (TestDrainMigratesCounter).
	c.startAgent("a1", "--criu-path", "none")
	c.strata("run", "-f", c.writeSpec("web", `
apiVersion: strata.dev/v1
kind: Workload
metadata: {name: web}
spec:
  groups:
    - name: g
      replicas: 3
      disruption: {maxUnavailable: 1}
      tasks:
        - name: t
          command: ["sleep", "300"]
          resources: {cpu: 100m, memory: 16Mi}
`), "--wait", "--timeout", "30s")
	c.eventually(30*time.Second, "three replicas run on a1", func() error {
		if got := len(runningAllocs(c.allocs("web"))); got != 3 {
			return fmt.Errorf("%d running", got)
		}
		return nil
	})
	c.startAgent("a2", "--criu-path", "none")

	out := c.mustStrata("node", "drain", "a1", "--watch", "--deadline", "2m")
	if !strings.Contains(out, "drain of a1 done") {
		t.Fatalf("drain --watch said:\n%s", out)
	}
	running := runningAllocs(c.allocs("web"))
	if len(running) != 3 {
		t.Fatalf("%d replicas running after the drain, want 3", len(running))
	}
	for _, a := range running {
		if a.NodeName != "a2" {
			t.Fatalf("replica %s[%d] still on %s", a.Group, a.Index, a.NodeName)
		}
		if a.PreviousAlloc == "" {
			t.Fatalf("replica %s[%d] on a2 replaces nothing: want a move", a.Group, a.Index)
		}
	}
	var st api.NodeStatus
	if err := json.Unmarshal([]byte(c.mustStrata("node", "status", "a1", "-o", "json")), &st); err != nil {
		t.Fatal(err)
	}
	if st.Node.Eligibility != api.NodeIneligible || st.Node.Drain != nil || len(st.Allocations) != 0 {
		t.Fatalf("a1 after the drain: eligibility %s drain %+v, %d allocations", st.Node.Eligibility, st.Node.Drain, len(st.Allocations))
	}
	if events := c.mustStrata("events"); !strings.Contains(events, "drain complete") {
		t.Fatalf("no drain-complete event in:\n%s", events)
	}
	c.mustStrata("node", "eligibility", "a1", "--enable")
	if n := c.node("a1"); n == nil || !n.Ready() {
		t.Fatalf("a1 after enable: %+v", n)
	}
}
