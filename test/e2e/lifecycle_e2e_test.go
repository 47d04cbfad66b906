package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
)

// agentCell is the cell part of an agent's GET /v1/agent/health.
type agentCell struct {
	CellID   string `json:"cellId"`
	Index    uint64 `json:"index"`
	Refusing string `json:"refusing"`
	Refused  int    `json:"refusedAnswers"`
}

func (c *cell) agentHealth(httpAddr string) (agentCell, error) {
	var out struct {
		Cell agentCell `json:"cell"`
	}
	resp, err := c.agentHTTPClient().Get(httpAddr + "/v1/agent/health")
	if err != nil {
		return out.Cell, err
	}
	defer resp.Body.Close()
	err = json.NewDecoder(resp.Body).Decode(&out)
	return out.Cell, err
}

// TestEmptyServerDoesNotWipeTheCell reproduces defect 4 of issue 7: a
// server restarted on an empty data dir made every agent kill all its tasks
// within 5 s. The agent must refuse the new cell's (empty) desired state,
// keep its tasks, and say so in its log and HTTP status; restarted with
// --join-new-cell it moves to the new cell on purpose, whose list then wins,
// and the new cell's events tell the move.
func TestEmptyServerDoesNotWipeTheCell(t *testing.T) {
	c := newCell(t, 10*time.Second)
	c.startAgent("n1")
	c.mustStrata("run", "-f", c.writeSpec("precious", fmt.Sprintf(sleeper, "precious", 2)), "--wait", "--timeout", "60s")
	var pids []int
	for _, a := range runningAllocs(c.allocs("precious")) {
		pids = append(pids, a.TaskStates["sleeper"].PID)
	}
	if len(pids) != 2 {
		t.Fatalf("want 2 running tasks, got pids %v", pids)
	}
	t.Cleanup(func() {
		for _, pid := range pids {
			killTree(pid) // the old cell is gone: nobody else stops them if this test fails
		}
	})
	n1 := c.node("n1")
	before, err := c.agentHealth(n1.HTTPAddr)
	if err != nil || before.CellID == "" || before.Refusing != "" {
		t.Fatalf("agent's cell before: %+v, %v", before, err)
	}

	c.kill(c.server)
	if err := os.RemoveAll(filepath.Join(c.dir, "server")); err != nil {
		t.Fatal(err)
	}
	c.startServer()
	c.eventually(30*time.Second, "the agent refuses the new cell, several times", func() error {
		h, err := c.agentHealth(n1.HTTPAddr)
		if err != nil {
			return err
		}
		if h.Refused < 10 || !strings.Contains(h.Refusing, "belongs to cell") {
			return fmt.Errorf("agent's cell %+v", h)
		}
		return nil
	})
	for _, pid := range pids {
		if !pidAlive(pid) {
			t.Fatalf("task pid %d died when a server with an empty data dir answered", pid)
		}
	}
	if log := c.agents["n1"].log.String(); !strings.Contains(log, "REFUSING desired state") {
		t.Errorf("the agent's log does not say it refuses:\n%s", log)
	}

	// On purpose: the node joins the new cell, which runs nothing there.
	c.kill(c.agents["n1"])
	c.startAgent("n1", "--join-new-cell")
	sum := sha256.Sum256([]byte(filepath.Join(c.dir, "agent-n1")))
	parent := filepath.Join("/sys/fs/cgroup/memory/strata", hex.EncodeToString(sum[:])[:12])
	c.eventually(30*time.Second, "the old cell's tasks stopped and their cgroups removed", func() error {
		for _, pid := range pids {
			if pidAlive(pid) {
				return fmt.Errorf("pid %d still runs", pid)
			}
		}
		if dirs, _ := filepath.Glob(filepath.Join(parent, "*", "sleeper")); len(dirs) > 0 {
			return fmt.Errorf("task cgroups left: %v", dirs)
		}
		return nil
	})
	c.eventually(10*time.Second, "the move in the new cell's events", func() error {
		events, _, err := c.newClient(c.addr).Events(context.Background(), "", nil)
		if err != nil {
			return err
		}
		for _, e := range events {
			if e.Type == api.EventNodeAgent && strings.Contains(e.Message, "left cell "+before.CellID) {
				return nil
			}
		}
		return fmt.Errorf("no node-agent event about leaving cell %s in %d events", before.CellID, len(events))
	})
}

// shimsOf lists the live shims that run task dirs under dataDir.
func shimsOf(dataDir string) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(cmdline), "__shim\x00"+filepath.Join(dataDir, "allocs")+"/") && pidAlive(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// TestLostAgentDataDirLeavesNothing reproduces defect 6 of issue 7: after
// kill -9 of an agent and the loss of its data dir, 3 tasks, 3 shims and 12
// cgroup dirs kept running for good, even once the workload was purged. The
// restarted agent (a new node to the cell) must stop them all, remove
// their cgroups and tell the cell.
func TestLostAgentDataDirLeavesNothing(t *testing.T) {
	c := newCell(t, 10*time.Second)
	c.startAgent("n1")
	dataDir := filepath.Join(c.dir, "agent-n1")
	c.mustStrata("run", "-f", c.writeSpec("doomed", fmt.Sprintf(sleeper, "doomed", 3)), "--wait", "--timeout", "60s")
	var pids []int
	var allocIDs []string
	for _, a := range runningAllocs(c.allocs("doomed")) {
		pids = append(pids, a.TaskStates["sleeper"].PID)
		allocIDs = append(allocIDs, a.ID)
	}
	shims := shimsOf(dataDir)
	if len(pids) != 3 || len(shims) != 3 {
		t.Fatalf("want 3 tasks and 3 shims, got pids %v shims %v", pids, shims)
	}
	t.Cleanup(func() {
		for _, pid := range append(pids, shims...) {
			killTree(pid)
		}
	})
	sum := sha256.Sum256([]byte(dataDir))
	parent := filepath.Join("/sys/fs/cgroup/memory/strata", hex.EncodeToString(sum[:])[:12])
	for _, id := range allocIDs {
		if _, err := os.Stat(filepath.Join(parent, id, "sleeper")); err != nil {
			t.Skipf("no v1 memory cgroup for the task (%v); this check is for cgroup v1 hosts", err)
		}
	}

	c.kill(c.agents["n1"])
	if err := os.RemoveAll(dataDir); err != nil {
		t.Fatal(err)
	}
	c.mustStrata("stop", "doomed", "--purge")
	c.startAgent("n1")
	c.eventually(30*time.Second, "every task and shim of the lost data dir ended, cgroups removed", func() error {
		for _, pid := range pids {
			if pidAlive(pid) {
				return fmt.Errorf("task pid %d still runs", pid)
			}
		}
		if s := shimsOf(dataDir); len(s) > 0 {
			return fmt.Errorf("shims %v still run", s)
		}
		for _, id := range allocIDs {
			if _, err := os.Stat(filepath.Join(parent, id)); !os.IsNotExist(err) {
				return fmt.Errorf("cgroup of %s still there (%v)", id, err)
			}
		}
		return nil
	})
	c.eventually(10*time.Second, "the cell's events tell it", func() error {
		events, _, err := c.newClient(c.addr).Events(context.Background(), "", nil)
		if err != nil {
			return err
		}
		n := 0
		for _, e := range events {
			if e.Type == api.EventNodeAgent && strings.Contains(e.Message, "orphaned sleeper") {
				n++
			}
		}
		if n != 3 {
			return fmt.Errorf("%d node-agent events about stopped orphans, want 3", n)
		}
		return nil
	})
}

// removeAgentCgroupParent removes the empty cgroup parent of a SIGKILLed
// agent (strata/<hash of its data dir>; an agent that stops cleanly
// removes it itself). A parent that still holds a task cgroup stays.
func removeAgentCgroupParent(dataDir string) {
	sum := sha256.Sum256([]byte(dataDir))
	parent := filepath.Join("strata", hex.EncodeToString(sum[:])[:12])
	for _, base := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/cpu", "/sys/fs/cgroup/memory", "/sys/fs/cgroup/pids", "/sys/fs/cgroup/cpuset"} {
		os.Remove(filepath.Join(base, parent))
	}
}
