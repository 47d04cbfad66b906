package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
)

// serverSpec is how one server of a multi-server test cell is started.
type serverSpec struct {
	dataDir, httpAddr, raftAddr string
	join                        []string
}

// startCluster starts n `strata server` processes with --bootstrap-expect
// n, each joining the first, and an agent that knows all of them; c.addr
// lists every server, as STRATA_ADDR may.
func startCluster(t *testing.T, n int) (*cell, []serverSpec) {
	t.Helper()
	return startClusterWith(t, n, nil)
}

// startClusterWith is startCluster with extra flags for every server.
func startClusterWith(t *testing.T, n int, serverArgs []string) (*cell, []serverSpec) {
	t.Helper()
	return startClusterFrom(t, n, "", serverArgs)
}

// startClusterFrom is startClusterWith with the daemons started from bin
// (empty: the binary of this tree).
func startClusterFrom(t *testing.T, n int, bin string, serverArgs []string) (*cell, []serverSpec) {
	t.Helper()
	c := &cell{t: t, dir: t.TempDir(), ttl: 5 * time.Second, agents: map[string]*proc{}, serverArgs: serverArgs, bin: bin}
	c.tlsDir = newTLSDir(t, c.dir)
	t.Cleanup(c.shutdown)
	specs := make([]serverSpec, n)
	var addrs []string
	for i := range specs {
		specs[i] = serverSpec{dataDir: filepath.Join(c.dir, fmt.Sprintf("server%d", i+1)), httpAddr: freeAddr(t), raftAddr: freeAddr(t)}
		addrs = append(addrs, c.url(specs[i].httpAddr))
	}
	for i := 1; i < n; i++ {
		specs[i].join = []string{specs[0].raftAddr}
	}
	c.addr = strings.Join(addrs, ",")
	c.servers = make([]*proc, n)
	for i := range specs {
		c.servers[i] = c.startClusterServer(specs[i], n)
	}
	c.eventually(30*time.Second, "a cell of 3 voters", func() error {
		conf, err := c.newClient(c.addr).RaftConfiguration(context.Background(), nil)
		if err != nil || len(conf.Servers) != n {
			return fmt.Errorf("%+v %v", conf, err)
		}
		return nil
	})
	return c, specs
}

func (c *cell) startClusterServer(s serverSpec, expect int) *proc {
	args := []string{"server", "--data-dir", s.dataDir, "--http-addr", s.httpAddr, "--raft-addr", s.raftAddr,
		"--bootstrap-expect", fmt.Sprint(expect), "--heartbeat-ttl", c.ttl.String()}
	for _, j := range s.join {
		args = append(args, "--join", j)
	}
	return c.spawn(append(args, c.serverArgs...)...)
}

// leaderIndex returns which server leads, as the cell says.
func leaderIndex(t *testing.T, c *cell, specs []serverSpec) int {
	t.Helper()
	idx := -1
	c.eventually(20*time.Second, "a leader", func() error {
		conf, err := c.newClient(c.addr).RaftConfiguration(context.Background(), nil)
		if err != nil {
			return err
		}
		for _, s := range conf.Servers {
			for i, sp := range specs {
				if s.Leader && s.Address == sp.raftAddr {
					idx = i
					return nil
				}
			}
		}
		return fmt.Errorf("no leader in %+v", conf.Servers)
	})
	return idx
}

// TestThreeServerCell is the short multi-server story, with real
// processes: form a cell with --bootstrap-expect/--join, write through a
// follower, SIGKILL the leader, write again, and the killed server rejoins
// from its data dir; the agent's task runs on throughout.
func TestThreeServerCell(t *testing.T) {
	c, specs := startCluster(t, 3)
	c.startAgent("n1") // --servers lists all three
	l := leaderIndex(t, c, specs)
	f := (l + 1) % 3

	// A write through a follower only (the CLI pointed at it alone).
	out, errOut, code := c.strataAt(c.url(specs[f].httpAddr), "run", "-f", c.writeSpec("web", fmt.Sprintf(sleeper, "web", 1)), "--wait", "--timeout", "60s")
	if code != 0 {
		t.Fatalf("run through a follower: exit %d\n%s\n%s", code, out, errOut)
	}
	run := runningAllocs(c.allocs("web"))
	if len(run) != 1 {
		t.Fatalf("want 1 running allocation, got %d", len(run))
	}
	pid := run[0].TaskStates["sleeper"].PID

	killed := time.Now()
	c.kill(c.servers[l])
	c.mustStrata("run", "-f", c.writeSpec("after", fmt.Sprintf(sleeper, "after", 1)))
	t.Logf("write acknowledged %v after the leader's SIGKILL", time.Since(killed).Round(time.Millisecond))
	if nl := leaderIndex(t, c, specs); nl == l {
		t.Fatalf("the killed server %d still leads", l+1)
	}

	c.servers[l] = c.startClusterServer(specs[l], 3)
	c.eventually(30*time.Second, "the killed server back and caught up", func() error {
		resp, err := c.httpClient(10 * time.Second).Get(c.url(specs[l].httpAddr) + "/v1/workloads?stale")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		var list []api.WorkloadSummary
		if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || resp.StatusCode != http.StatusOK || len(list) != 2 {
			return fmt.Errorf("%d %+v %v", resp.StatusCode, list, err)
		}
		return nil
	})
	conf, err := c.newClient(c.addr).RaftConfiguration(context.Background(), nil)
	if err != nil || len(conf.Servers) != 3 {
		t.Fatalf("configuration after the rejoin: %+v %v", conf, err)
	}
	if n := c.node("n1"); n == nil || n.Status != api.NodeReady {
		t.Fatalf("the agent's node after the failover: %+v", n)
	}
	for _, a := range c.allocs("web") {
		if ts := a.TaskStates["sleeper"]; a.ClientStatus == api.AllocRunning && (ts.PID != pid || !pidAlive(pid)) {
			t.Fatalf("the task was restarted through the failover: pid %d → %+v", pid, ts)
		}
	}
}

// strataAt runs a CLI command against the servers at addr.
func (c *cell) strataAt(addr string, args ...string) (string, string, int) {
	saved := c.addr
	c.addr = addr
	defer func() { c.addr = saved }()
	return c.strata(args...)
}
