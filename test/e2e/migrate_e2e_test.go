package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/criu"
	"golang.org/x/sys/unix"
)

// counterSpec is a workload of one task that counts in a shell variable,
// one number a line: what it remembers lives only in its process memory.
// It runs as root: criu reads a task's rlimits with prlimit, which needs
// CAP_SYS_RESOURCE for another user's task, and root in this CI's
// container lacks that capability.
const counterSpec = `
apiVersion: strata.dev/v1
kind: Workload
metadata:
  name: %s
spec:
  groups:
    - name: main
      replicas: 1
      restartPolicy: {mode: always}
      tasks:
        - name: counter
          user: root
          command: ["/bin/sh", "-c", %q]
          resources: {cpu: 100m, memory: 64Mi}
`

const counterLoop = `i=0; while :; do i=$((i+1)); echo $i; sleep 0.05; done`

// needCriu returns a working criu ($STRATA_CRIU or on PATH) or skips.
func needCriu(t *testing.T) string {
	t.Helper()
	info := criu.Probe(context.Background(), os.Getenv("STRATA_CRIU"))
	if !info.Available {
		t.Skipf("no working criu: %s (.ci/build-criu builds CRIU 4.2; set STRATA_CRIU)", info.Reason)
	}
	return info.Path
}

// counts reads the numbers the allocation's task printed on its current
// node (strata logs).
func (c *cell) counts(allocID string) []int {
	c.t.Helper()
	out, _, code := c.strata("logs", allocID)
	if code != 0 {
		return nil
	}
	var n []int
	for _, f := range strings.Fields(out) {
		v, err := strconv.Atoi(f)
		if err != nil {
			c.t.Fatalf("log line %q is not a count", f)
		}
		n = append(n, v)
	}
	return n
}

func (c *cell) alloc(id string) *api.Allocation {
	c.t.Helper()
	a, err := c.newClient(c.addr).Allocation(context.Background(), id)
	if err != nil {
		c.t.Fatalf("allocation %s: %v", id, err)
	}
	return a
}

func consecutive(n []int) error {
	for i := 1; i < len(n); i++ {
		if n[i] != n[i-1]+1 {
			return fmt.Errorf("count goes %d -> %d at line %d", n[i-1], n[i], i+1)
		}
	}
	return nil
}

// startCounter runs a counter workload and waits until it has counted to 20.
func (c *cell) startCounter(name string) *api.Allocation {
	c.t.Helper()
	return c.startCounterSpec(name, fmt.Sprintf(counterSpec, name, counterLoop))
}

// startCounterSpec runs the counter workload spec and waits until it has
// counted to 20.
func (c *cell) startCounterSpec(name, spec string) *api.Allocation {
	c.t.Helper()
	c.mustStrata("run", "-f", c.writeSpec(name, spec), "--wait", "--timeout", "90s")
	running := runningAllocs(c.allocs(name))
	if len(running) != 1 {
		c.t.Fatalf("want 1 running counter, got %d", len(running))
	}
	a := running[0]
	c.eventually(20*time.Second, "the counter counts", func() error {
		if n := c.counts(a.ID); len(n) < 20 {
			return fmt.Errorf("%d lines", len(n))
		}
		return nil
	})
	return a
}

// TestMigrateCounterKeepsMemory: a counter migrated between two agents
// (first where the scheduler chooses, then back with --to) goes on from
// where it was each time, under the same allocation id, the move committed
// once, nothing left on the node it left. The agents start exec tasks as
// by default, each under an init in its own namespaces.
func TestMigrateCounterKeepsMemory(t *testing.T) {
	criuPath := needCriu(t)
	c := newCell(t, 10*time.Second)
	// Images on tmpfs (the other migration tests keep them in the data dir).
	c.startAgent("n1", "--criu-path", criuPath, "--allow-root-tasks", "--migrate-image-dir", "/dev/shm")
	c.startAgent("n2", "--criu-path", criuPath, "--allow-root-tasks", "--migrate-image-dir", "/dev/shm")
	if out := c.mustStrata("nodes"); !strings.Contains(out, "CHECKPOINT") || strings.Count(out, "criu 4.") != 2 {
		t.Fatalf("strata nodes does not show both nodes can checkpoint:\n%s", out)
	}
	nodes, _, err := c.newClient(c.addr).Nodes(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if n.Checkpoint == nil || !slices.Contains(n.Checkpoint.Drivers, "exec") {
			t.Fatalf("node %s advertises %+v: want exec tasks to keep their memory without --checkpointable-tasks", n.Name, n.Checkpoint)
		}
	}

	a := c.startCounter("counter")
	source := a.NodeName
	before := c.counts(a.ID)

	out := c.mustStrata("alloc", "migrate", a.ID)
	if !strings.Contains(out, "migrated to node") || !strings.Contains(out, "downtime") {
		t.Fatalf("strata alloc migrate said:\n%s", out)
	}
	moved := c.alloc(a.ID)
	if moved.NodeName == source {
		t.Fatalf("the allocation is still on %s after the move", source)
	}
	m := moved.Migration
	if m == nil || m.Outcome != api.MigrationCommitted || m.Report == nil || m.Report.CheckpointBytes <= 0 || m.Report.DowntimeMs <= 0 {
		t.Fatalf("migration record %+v", m)
	}
	if m.Token != "" {
		t.Error("the public API shows the migration's token")
	}
	if onTmpfs("/dev/shm") && m.Report.ImageStore != "tmpfs" {
		t.Errorf("the image went to %q, want tmpfs (/dev/shm is one)", m.Report.ImageStore)
	}
	if m.Report.PreCopy == "" {
		t.Error("the report does not say why no memory was copied ahead")
	}
	c.checkContinues(a.ID, before[len(before)-1])

	// Nothing of the allocation is left on the source node.
	if _, err := os.Stat(filepath.Join(c.dir, "agent-"+source, "allocs", a.ID)); !os.IsNotExist(err) {
		t.Errorf("the source still holds the allocation's directory (%v)", err)
	}

	// And back, to the node named.
	before = c.counts(a.ID)
	c.mustStrata("alloc", "migrate", a.ID[:8], "--to", source)
	if back := c.alloc(a.ID); back.NodeName != source {
		t.Fatalf("after migrate --to %s the allocation is on %s", source, back.NodeName)
	}
	c.checkContinues(a.ID, before[len(before)-1])

	events := c.mustStrata("events")
	if strings.Count(events, "committed: "+a.ID) != 2 {
		t.Errorf("events do not show two committed migrations:\n%s", events)
	}
	if got := runningAllocs(c.allocs("counter")); len(got) != 1 {
		t.Errorf("%d running allocations after two moves, want 1", len(got))
	}
	// No image is left on either node's tmpfs.
	if left, _ := filepath.Glob("/dev/shm/strata-images-*/" + a.ID); len(left) > 0 {
		t.Errorf("images left on tmpfs: %v", left)
	}
}

// onTmpfs reports whether dir is a tmpfs mount.
func onTmpfs(dir string) bool {
	var st unix.Statfs_t
	return unix.Statfs(dir, &st) == nil && st.Type == unix.TMPFS_MAGIC
}

// checkContinues waits until the counter has printed some numbers on its
// new node and checks that they go on from above last, one by one.
func (c *cell) checkContinues(allocID string, last int) {
	c.t.Helper()
	var after []int
	c.eventually(20*time.Second, "the counter counts on its new node", func() error {
		after = c.counts(allocID)
		if len(after) < 10 {
			return fmt.Errorf("%d lines", len(after))
		}
		return nil
	})
	if after[0] <= last {
		c.t.Fatalf("on its new node the counter began at %d, not after %d: it did not keep its memory (log %v)", after[0], last, after)
	}
	if err := consecutive(after); err != nil {
		c.t.Fatalf("on its new node: %v", err)
	}
}

// TestMigrateAbortRestoresOnSource: the target's restore fails (its criu
// refuses to restore), so the move is aborted and the counter is restored
// where it was, counting on; the outcome says why.
func TestMigrateAbortRestoresOnSource(t *testing.T) {
	criuPath := needCriu(t)
	c := newCell(t, 10*time.Second)
	broken := filepath.Join(c.dir, "criu-no-restore")
	script := fmt.Sprintf("#!/bin/sh\nif [ \"$1\" = restore ]; then echo 'Error (test): this criu does not restore' >&2; exit 1; fi\nexec %s \"$@\"\n", criuPath)
	if err := os.WriteFile(broken, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	c.startAgent("n1", "--criu-path", criuPath, "--checkpointable-tasks", "--allow-root-tasks")
	a := c.startCounter("abort")
	c.startAgent("n2", "--criu-path", broken, "--checkpointable-tasks", "--allow-root-tasks")
	before := c.counts(a.ID)

	out, errOut, code := c.strata("alloc", "migrate", a.ID, "--to", "n2")
	if code == 0 || !strings.Contains(out+errOut, "aborted") || !strings.Contains(out+errOut, "does not restore") {
		t.Fatalf("strata alloc migrate: exit %d\n%s%s", code, out, errOut)
	}
	after := c.alloc(a.ID)
	if after.NodeName != "n1" || after.Migration.Outcome != api.MigrationAborted {
		t.Fatalf("allocation on %s, migration %+v", after.NodeName, after.Migration)
	}
	c.eventually(20*time.Second, "the counter counts on after the abort", func() error {
		n := c.counts(a.ID)
		if len(n) < len(before)+10 {
			return fmt.Errorf("%d lines", len(n))
		}
		return consecutive(n) // the same log: no restart from 1, no gap
	})
}

// TestMigrateFallsBackToRestart: a task criu cannot dump (here the
// source's criu refuses every dump) moves by stop and restart, and the
// outcome says so and why.
func TestMigrateFallsBackToRestart(t *testing.T) {
	criuPath := needCriu(t)
	c := newCell(t, 10*time.Second)
	broken := filepath.Join(c.dir, "criu-no-dump")
	// It dumps the agent's probe (a sleep) and no task: the node says it
	// can checkpoint, and the move meets the failure.
	script := fmt.Sprintf("#!/bin/sh\nif [ \"$1\" = dump ] && [ \"$(cat /proc/$3/comm)\" != sleep ]; then echo 'Error (test): this criu does not dump' >&2; exit 1; fi\nexec %s \"$@\"\n", criuPath)
	if err := os.WriteFile(broken, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	c.startAgent("n1", "--criu-path", broken, "--allow-root-tasks")
	a := c.startCounter("fallback")
	c.startAgent("n2", "--criu-path", criuPath, "--allow-root-tasks")
	out := c.mustStrata("alloc", "migrate", a.ID, "-o", "json")
	var m api.Migration
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("decode %q: %v", out, err)
	}
	if m.Outcome != api.MigrationCommitted || !m.Fallback || !strings.Contains(m.Reason, "does not dump") {
		t.Fatalf("migration %+v, want committed by fallback with its reason", m)
	}
	if moved := c.alloc(a.ID); moved.NodeName == a.NodeName {
		t.Fatalf("still on %s", a.NodeName)
	}
	c.eventually(30*time.Second, "the counter starts afresh on the target", func() error {
		n := c.counts(a.ID)
		if len(n) < 3 || n[0] != 1 {
			return fmt.Errorf("log %v", n)
		}
		return consecutive(n)
	})
	if events := c.mustStrata("events"); !strings.Contains(events, "restarted afresh") {
		t.Errorf("events do not say the move restarted the task:\n%s", events)
	}
}
