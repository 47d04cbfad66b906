package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
)

// startDev starts `strata dev` on dir and waits for its node to be ready.
func (c *cell) startDev(dir, httpAddr string) {
	c.t.Helper()
	c.server = &proc{log: &syncBuffer{}}
	c.server.cmd = exec.Command(strataBin, "dev", "--data-dir", dir, "--http-addr", httpAddr)
	c.server.cmd.Env = c.daemonEnv("dev")
	c.server.cmd.Stdout, c.server.cmd.Stderr = c.server.log, c.server.log
	if err := c.server.cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	c.eventually(30*time.Second, "dev node ready", func() error {
		nodes, _, err := c.newClient(c.addr).Nodes(context.Background(), nil)
		if err != nil || len(nodes) != 1 || nodes[0].Status != api.NodeReady {
			return fmt.Errorf("nodes %v %v", nodes, err)
		}
		return nil
	})
}

// lengthenLog commits n small writes (cell configurations) from several
// clients, so that a restarted server has a long log to replay.
func lengthenLog(t *testing.T, cl *api.Client, n int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 16 {
				doc := fmt.Sprintf("apiVersion: strata.dev/v1\nkind: CellConfig\ntimeWindows:\n  - {name: w%d, start: \"09:00\", end: \"17:00\", timeZone: UTC}\n", i)
				if _, err := cl.SetCellConfig(context.Background(), []byte(doc)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("lengthen the log: %v", err)
	}
}

// TestDevRestartKeepsTasks reproduces issue 7 defect 1 as a user met it:
// `strata dev` restarted on its data dir stopped every running task as "no
// longer listed" and started it again with a new PID, because the server
// answered the agent's watch from a partly replayed state. The task must
// run on with the same PID and no restart.
func TestDevRestartKeepsTasks(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "dev")
	httpAddr := freeAddr(t)
	// strata dev makes its own CA and certificates in its data dir.
	c := &cell{t: t, dir: t.TempDir(), addr: "https://" + httpAddr, agents: map[string]*proc{}, tlsDir: filepath.Join(dir, "tls")}
	t.Cleanup(c.shutdown)
	c.startDev(dir, httpAddr)
	lengthenLog(t, c.newClient(c.addr), 6000)
	// Placed last, so a partly replayed log does not list it yet.
	c.mustStrata("run", "-f", c.writeSpec("steady", fmt.Sprintf(sleeper, "steady", 1)), "--wait", "--timeout", "60s")
	run := runningAllocs(c.allocs("steady"))
	if len(run) != 1 {
		t.Fatalf("want 1 running allocation, got %d", len(run))
	}
	id, pid := run[0].ID, run[0].TaskStates["sleeper"].PID

	c.kill(c.server)
	if !pidAlive(pid) {
		t.Fatalf("task pid %d died with strata dev", pid)
	}
	first := c.server.log.String()
	c.startDev(dir, httpAddr)
	// Watch the restarted agent for a while: its first watches and reports
	// happen right after start, which is when a partly replayed server
	// told it to stop everything.
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		if !pidAlive(pid) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	log := strings.TrimPrefix(c.server.log.String(), first)
	if strings.Contains(log, "no longer lists") || strings.Contains(log, "starting allocation") {
		t.Errorf("the restarted agent stopped or restarted the task:\n%s", log)
	}
	if !pidAlive(pid) {
		t.Fatalf("task pid %d was killed after the restart", pid)
	}
	c.eventually(20*time.Second, "the task reported running with its old pid", func() error {
		for _, a := range c.allocs("steady") {
			if a.ID != id {
				continue
			}
			ts := a.TaskStates["sleeper"]
			if ts == nil || ts.PID != pid || ts.Restarts != 0 || a.ClientStatus != api.AllocRunning {
				return fmt.Errorf("alloc %s: %s %+v, want pid %d running", a.ID, a.ClientStatus, ts, pid)
			}
			return nil
		}
		return fmt.Errorf("allocation %s is gone", id)
	})
}
