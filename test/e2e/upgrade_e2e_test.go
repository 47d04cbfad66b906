package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
)

// TestRollingUpgrade upgrades a running cell as docs/install.md says:
// three servers and an agent run the binary of an earlier commit
// ($STRATA_UPGRADE_FROM, default HEAD~1), then each server is stopped
// and started again from this tree's binary on its data dir, followers
// first and the leader last, then the agent. Throughout, the cell takes
// writes once each server is back, and the task started before the upgrade
// keeps running with the same pid.
func TestRollingUpgrade(t *testing.T) {
	from := os.Getenv("STRATA_UPGRADE_FROM")
	if from == "" {
		from = "HEAD~1"
	}
	oldBin := buildAt(t, from)

	c, specs := startClusterFrom(t, 3, oldBin, nil)
	c.startAgent("n1")
	c.mustStrata("run", "-f", c.writeSpec("web", fmt.Sprintf(sleeper, "web", 1)), "--wait", "--timeout", "60s")
	run := runningAllocs(c.allocs("web"))
	if len(run) != 1 {
		t.Fatalf("want 1 running allocation, got %d", len(run))
	}
	pid := run[0].TaskStates["sleeper"].PID

	leader := leaderIndex(t, c, specs)
	order := []int{}
	for i := range specs {
		if i != leader {
			order = append(order, i)
		}
	}
	order = append(order, leader)
	c.bin = "" // from now on: this tree's binary
	for step, i := range order {
		c.stop(c.servers[i])
		c.servers[i] = c.startClusterServer(specs[i], len(specs))
		c.eventually(60*time.Second, fmt.Sprintf("server %d back on the new binary, three voters and a leader", i+1), func() error {
			conf, err := c.newClient(c.addr).RaftConfiguration(context.Background(), nil)
			if err != nil {
				return err
			}
			leaders := 0
			for _, s := range conf.Servers {
				if s.Leader {
					leaders++
				}
			}
			if len(conf.Servers) != 3 || leaders != 1 {
				return fmt.Errorf("%+v", conf.Servers)
			}
			_, _, err = c.newClient(c.url(specs[i].httpAddr)).Workloads(context.Background(), &api.Query{Stale: true})
			return err
		})
		name := fmt.Sprintf("after%d", step+1)
		c.mustStrata("run", "-f", c.writeSpec(name, fmt.Sprintf(sleeper, name, 1)))
	}
	if !strings.Contains(c.mustStrata("version"), "API v1") {
		t.Fatal("strata version of the new binary does not say its API version")
	}

	c.stop(c.agents["n1"])
	c.startAgent("n1")
	c.eventually(30*time.Second, "the upgraded agent running the task it had", func() error {
		for _, a := range c.allocs("web") {
			if a.ClientStatus == api.AllocRunning && a.TaskStates["sleeper"].PID == pid && pidAlive(pid) {
				return nil
			}
		}
		return fmt.Errorf("pid %d not running under the upgraded agent: %+v", pid, c.allocs("web"))
	})
	c.eventually(60*time.Second, "the workloads written during the upgrade running", func() error {
		for step := range order {
			if len(runningAllocs(c.allocs(fmt.Sprintf("after%d", step+1)))) != 1 {
				return fmt.Errorf("after%d not running", step+1)
			}
		}
		return nil
	})
}

// stop ends a daemon as systemd does for an upgrade (SIGTERM) and waits.
func (c *cell) stop(p *proc) {
	if p == nil || p.cmd.Process == nil {
		return
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		c.kill(p)
	}
}

// buildAt builds the strata binary of git revision rev, from a worktree of
// this repository; the test is skipped when the revision is not there (a
// shallow clone).
func buildAt(t *testing.T, rev string) string {
	t.Helper()
	root := repoRoot(t)
	commit, err := exec.Command("git", "-C", root, "rev-parse", "--verify", rev+"^{commit}").Output()
	if err != nil {
		t.Skipf("upgrade from %s: no such commit here (a shallow clone?): %v", rev, err)
	}
	dir := filepath.Join(t.TempDir(), "from")
	if out, err := exec.Command("git", "-C", root, "worktree", "add", "--detach", dir, strings.TrimSpace(string(commit))).CombinedOutput(); err != nil {
		t.Fatalf("git worktree add: %v\n%s", err, out)
	}
	t.Cleanup(func() { exec.Command("git", "-C", root, "worktree", "remove", "--force", dir).Run() })
	bin := filepath.Join(t.TempDir(), "strata-"+strings.TrimSpace(string(commit))[:12])
	build := exec.Command("go", "build", "-o", bin, "./cmd/strata")
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", rev, err, out)
	}
	t.Logf("upgrading from %s (%s)", rev, strings.TrimSpace(string(commit))[:12])
	return bin
}
