package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
)

// TestDrainMigratesCounter: draining the node of a counter whose agents
// can checkpoint moves it by live migration: the same allocation runs on
// the other node and its count goes on from where it was, instead of a
// replacement counting from 1.
func TestDrainMigratesCounter(t *testing.T) {
	criuPath := needCriu(t)
	c := newCell(t, 10*time.Second)
	c.startAgent("n1", "--criu-path", criuPath, "--allow-root-tasks")
	a := c.startCounter("drained")
	c.startAgent("n2", "--criu-path", criuPath, "--allow-root-tasks")
	before := c.counts(a.ID)

	out := c.mustStrata("node", "drain", "n1", "--watch", "--deadline", "5m")
	if !strings.Contains(out, "drain of n1 done") {
		t.Fatalf("drain --watch said:\n%s", out)
	}
	moved := c.alloc(a.ID)
	if moved.NodeName != "n2" || moved.DesiredStatus != api.DesiredRun {
		t.Fatalf("after the drain the allocation is on %s, desired %s: want the same allocation running on n2", moved.NodeName, moved.DesiredStatus)
	}
	if m := moved.Migration; m == nil || m.Outcome != api.MigrationCommitted || m.Fallback {
		t.Fatalf("migration record %+v, want a committed live migration", m)
	}
	c.checkContinues(a.ID, before[len(before)-1])
	if got := runningAllocs(c.allocs("drained")); len(got) != 1 || got[0].ID != a.ID {
		t.Fatalf("running after the drain: %d allocations, want only %s", len(got), a.ID)
	}
}
