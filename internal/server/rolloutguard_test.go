package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/rolloutguard"
	"github.com/strata-dev/strata/internal/server"
	"github.com/strata-dev/strata/internal/server/servertest"
)

// guardWorkload is a 4-replica mock workload on nodes that hold one copy
// each, replaced quickly when it fails; cmd changes the spec.
func guardWorkload(cmd string) []byte {
	return []byte(fmt.Sprintf(`
apiVersion: strata.dev/v1
kind: Workload
metadata: {name: web}
spec:
  groups:
    - name: g
      replicas: 4
      update: {maxParallel: 2, minHealthyTime: 300ms, healthyDeadline: 1m, progressDeadline: 10m, autoRevert: true}
      reschedule: {attempts: 50, interval: 1h, delay: 100ms, delayFunction: constant}
      tasks:
        - {name: t, driver: mock, command: [%q], resources: {cpu: 100m, memory: 64Mi}}
`, cmd))
}

// TestRolloutGuardHaltsACrashingVersion: version 2 crashes right after it
// starts, on every node. Its progress deadline (10 minutes) would let it
// try for long; the leader's rollout guard sees the failed starts against
// the old version's clean ones and fails the deployment with its reason,
// which reverts it (autoRevert), and `strata deployment status` shows
// the guard's evidence while it judges.
func TestRolloutGuardHaltsACrashingVersion(t *testing.T) {
	c := servertest.Start(t, 1, func(_ int, cfg *server.Config) {
		cfg.IncidentInterval = 100 * time.Millisecond
		cfg.RolloutGuard.Policy = rolloutguard.Policy{Settle: 200 * time.Millisecond, StartWindow: 5 * time.Second}
	})
	ctx := context.Background()
	user := c.Client()
	agents := map[string]*api.Client{}
	for i := 1; i <= 8; i++ {
		id := fmt.Sprintf("g%d", i)
		agents[id] = c.AgentClient(id)
		n := &api.Node{ID: id, Name: id, Capacity: api.Resources{CPUMilli: 150, MemoryBytes: 256 << 20}}
		if err := agents[id].RegisterNode(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	// The agents: pending copies start; copies of "crash" fail 300 ms
	// after they started.
	agentsRun := func() {
		for _, a := range allocsOf(t, user, "web") {
			if a.DesiredStatus != api.DesiredRun {
				continue
			}
			var st string
			switch {
			case a.ClientStatus == api.AllocPending:
				st = api.AllocRunning
			case a.ClientStatus == api.AllocRunning && a.TaskGroup.Tasks[0].Command[0] == "crash" && time.Since(a.ClientStatusTime) > 300*time.Millisecond:
				st = api.AllocFailed
			default:
				continue
			}
			if err := agents[a.NodeID].UpdateAllocations(ctx, []*api.AllocUpdate{{ID: a.ID, ClientStatus: st, ClientReason: "task t: exit 2"}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := user.RegisterWorkload(ctx, guardWorkload("v1")); err != nil {
		t.Fatal(err)
	}
	await(t, 20*time.Second, "v1 running", func() error {
		agentsRun()
		if n := running(t, user)["v1"]; n != 4 {
			return fmt.Errorf("%d of v1 running", n)
		}
		return nil
	})
	reg, err := user.RegisterWorkload(ctx, guardWorkload("crash"))
	if err != nil {
		t.Fatal(err)
	}
	sawGuard := false
	await(t, 60*time.Second, "the guard halts version 2", func() error {
		agentsRun()
		d, _, err := user.Deployment(ctx, reg.DeploymentID, nil)
		if err != nil {
			return err
		}
		sawGuard = sawGuard || d.Guard != nil
		if d.Status != api.DeploymentFailed {
			return fmt.Errorf("deployment %s: %s", d.Status, d.StatusDescription)
		}
		if !strings.Contains(d.StatusDescription, "halted by the rollout guard: version 2 fails to start") {
			t.Fatalf("failed, but not by the guard: %q", d.StatusDescription)
		}
		if d.RevertedTo == 0 {
			return fmt.Errorf("failed by the guard, not reverted yet: %q", d.StatusDescription)
		}
		return nil
	})
	if !sawGuard {
		t.Fatal("the deployment's status never showed the guard's evidence while it judged")
	}
	await(t, 20*time.Second, "v1 running after the revert", func() error {
		agentsRun()
		if n := running(t, user)["v1"]; n != 4 {
			return fmt.Errorf("%d of v1 running", n)
		}
		return nil
	})
}
