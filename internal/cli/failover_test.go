package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent"
	"github.com/strata-dev/strata/internal/server"
	"github.com/strata-dev/strata/internal/server/servertest"
)

// nodeOn returns the node named name as the leader of c sees it.
func nodeOn(c *servertest.Cell, name string) *api.Node {
	nodes, _, err := api.NewClient(c.Addr(c.Leader())).Nodes(context.Background(), nil)
	if err != nil {
		return nil
	}
	for _, n := range nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

func waitNodeReady(t *testing.T, c *servertest.Cell, name string) {
	t.Helper()
	servertest.Eventually(t, 20*time.Second, "node "+name+" registered and ready", func() error {
		if n := nodeOn(c, name); n == nil || n.Status != api.NodeReady {
			return fmt.Errorf("node %s: %+v", name, n)
		}
		return nil
	})
}

// startTestAgent runs an agent configured as `strata agent --servers`.
func startTestAgent(t *testing.T, c *servertest.Cell, name string, servers []string) {
	t.Helper()
	af := agentFlags{name: name, cpuTotal: "2000", memoryTotal: "2GiB", httpAddr: "127.0.0.1:0", joinToken: c.JoinToken(),
		tls: tlsFlags{plaintext: true}}
	cfg, err := af.agentConfig(t.TempDir(), servers, servertest.Logger().With("agent", name))
	if err != nil {
		t.Fatal(err)
	}
	runTestAgent(t, cfg)
}

// runTestAgent runs an agent of cfg, quick to heartbeat, until the test
// ends.
func runTestAgent(t *testing.T, cfg agent.Config) {
	t.Helper()
	cfg.HeartbeatInterval = 100 * time.Millisecond
	cfg.WatchWait = 2 * time.Second
	cfg.GPUCommand = []string{filepath.Join(t.TempDir(), "no-nvidia-smi")}
	a, err := agent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); a.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

// TestAgentUsesEveryServer: an agent given several servers registers even
// when the first is down (it used to use only the first).
func TestAgentUsesEveryServer(t *testing.T) {
	t.Parallel()
	c := servertest.Start(t, 3, nil)
	l := c.Leader()
	startTestAgent(t, c, "n1", []string{"http://" + servertest.FreeAddr(t), c.Addr(l)})
	waitNodeReady(t, c, "n1")
}

// TestAgentRegistersThroughFollower: an agent that only knows a follower
// registers (the follower forwards; it used to answer 503 for ever).
func TestAgentRegistersThroughFollower(t *testing.T) {
	t.Parallel()
	c := servertest.Start(t, 3, nil)
	f := c.Follower(c.Leader())
	startTestAgent(t, c, "n1", []string{c.Addr(f)})
	waitNodeReady(t, c, "n1")
}

// TestAgentSurvivesItsServerReturningAsFollower: the agent's only server,
// the leader, restarts and comes back as a follower; the agent's heartbeats
// must reach the new leader (they used to get 503 for ever, and the node
// went down).
func TestAgentSurvivesItsServerReturningAsFollower(t *testing.T) {
	t.Parallel()
	// Long enough that a loaded machine restarting a server does not miss it;
	// the old agent never got a heartbeat through again, whatever the TTL.
	ttl := 4 * time.Second
	c := servertest.Start(t, 3, func(_ int, cfg *server.Config) { cfg.HeartbeatTTL = ttl })
	l := c.Leader()
	startTestAgent(t, c, "n1", []string{c.Addr(l)})
	waitNodeReady(t, c, "n1")
	c.Stop(l)
	if nl := c.Leader(); nl == l {
		t.Fatalf("server %d still leads after it stopped", l+1)
	}
	c.StartServer(l)
	// Several TTLs: a node whose heartbeats do not get through is down by then.
	deadline := time.Now().Add(3 * ttl)
	for time.Now().Before(deadline) {
		if n := nodeOn(c, "n1"); n != nil && n.Status != api.NodeReady {
			t.Fatalf("node went %s after its server came back as a follower: %s", n.Status, n.StatusReason)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if c.Servers[l].IsLeader() {
		t.Log("the restarted server became leader again; the follower path was not exercised")
	}
}
