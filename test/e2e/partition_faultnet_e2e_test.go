package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/test/faultnet"
)

// TestNetPartitionAtMostOnce is TestPartitionAtMostOnce across a real
// network partition (test/faultnet: a server and two agents, each in a
// network namespace of its own; a cut is nft drop rules). The cut-off
// agent runs on, cannot renew its lease, and fences its at-most-once
// copies itself; after the heal it must learn the server's choice within
// a second.
func TestNetPartitionAtMostOnce(t *testing.T) {
	n := faultnet.New(t)
	sHost := n.AddHost("s")
	agentHosts := map[string]*faultnet.Host{"n1": n.AddHost("n1"), "n2": n.AddHost("n2")}
	serverAddr := sHost.URL(4680)
	sHost.Start("server", strataBin, "server", "--data-dir", filepath.Join(n.Dir(), "server"),
		"--http-addr", sHost.Addr(4680), "--heartbeat-ttl", partitionTTL.String())
	cl := api.NewClientFor([]string{serverAddr})
	cl.HTTP = sHost.HTTPClient(10 * time.Second)
	ctx := context.Background()
	faultnet.Eventually(t, 20*time.Second, "the server answers", func() error {
		_, _, err := cl.Nodes(ctx, nil)
		return err
	})
	startAgent := func(name string) {
		h := agentHosts[name]
		h.Start("agent", strataBin, "agent", "--servers", serverAddr, "--data-dir", filepath.Join(n.Dir(), "agent-"+name),
			"--name", name, "--agent-http-addr", h.Addr(4690), "--cpu-total", "2000", "--memory-total", "2GiB")
		faultnet.Eventually(t, 20*time.Second, "agent "+name+" ready", func() error {
			nodes, _, err := cl.Nodes(ctx, nil)
			if err != nil {
				return err
			}
			for _, nd := range nodes {
				if nd.Name == name && nd.Status == api.NodeReady {
					return nil
				}
			}
			return fmt.Errorf("not ready")
		})
	}
	tickDir := n.Dir() // the agents' data dirs are agent-<name> in it
	allocs := func(workload string) []*api.Allocation {
		out, _, err := cl.Allocations(ctx, workload, nil)
		if err != nil {
			t.Fatalf("allocations: %v", err)
		}
		return out
	}
	startAgent("n1")
	amo, plain := tickerWorkloads()
	for _, doc := range []string{amo, plain} {
		if _, err := cl.RegisterWorkload(ctx, []byte(doc)); err != nil {
			t.Fatal(err)
		}
	}
	startAgent("n2")
	t.Cleanup(func() { // stop the tasks before the namespaces go
		n.HealAll()
		for _, w := range []string{"amo", "plain"} {
			cl.StopWorkload(ctx, w, true)
		}
		faultnet.Await(30*time.Second, func() error {
			for _, w := range []string{"amo", "plain"} {
				// Not found: the purge is done, its allocations collected.
				out, _, err := cl.Allocations(ctx, w, nil)
				if err != nil && !api.IsNotFound(err) {
					return err
				}
				if anyLive(out) {
					return fmt.Errorf("%s still runs", w)
				}
			}
			return nil
		})
	})
	rig := partitionRig{allocs: allocs,
		eventually: func(d time.Duration, what string, cond func() error) { faultnet.Eventually(t, d, what, cond) },
		cut:        func(node string) { n.Isolate(agentHosts[node]) },
		heal:       func(string) { n.HealAll() }}
	runPartitionTrials(t, rig, tickDir, "netpartition")
}
