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
	c.drainMovesWithMemory(a, "n1", "n2")
}

// drainMovesWithMemory drains node from, the node of the counter a, and
// checks that a itself moved to node to by a committed live migration and
// counts on from where it was, the only running allocation of its
// workload.
func (c *cell) drainMovesWithMemory(a *api.Allocation, from, to string) {
	c.t.Helper()
	before := c.counts(a.ID)
	out := c.mustStrata("node", "drain", from, "--watch", "--deadline", "5m")
	if !strings.Contains(out, "drain of "+from+" done") {
		c.t.Fatalf("drain --watch said:\n%s", out)
	}
	moved := c.alloc(a.ID)
	if moved.NodeName != to || moved.DesiredStatus != api.DesiredRun {
		c.t.Fatalf("after the drain the allocation is on %s, desired %s: want the same allocation running on %s", moved.NodeName, moved.DesiredStatus, to)
	}
	if m := moved.Migration; m == nil || m.Outcome != api.MigrationCommitted || m.Fallback {
		c.t.Fatalf("migration record %+v, want a committed live migration", m)
	}
	c.checkContinues(a.ID, before[len(before)-1])
	if got := runningAllocs(c.allocs(a.Workload)); len(got) != 1 || got[0].ID != a.ID {
		c.t.Fatalf("running after the drain: %d allocations, want only %s", len(got), a.ID)
	}
}
