package faults

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/test/faultnet"
)

// pinnedDoc is a workload of real processes (the exec driver) that only
// agent a1 may run.
const pinnedDoc = `apiVersion: strata.dev/v1
kind: Workload
metadata: {name: pinned}
spec:
  groups:
    - name: g
      replicas: 2
      placement:
        require: ["role=pinned"]
      tasks:
        - name: sleeper
          command: ["/bin/sh", "-c", "exec sleep 3600"]
          resources: {cpu: 50m, memory: 16Mi}
`

// agentTTL is the servers' heartbeat TTL in the agent scenario.
const agentTTL = 5 * time.Second

// TestAgentPartitionedAndHealed: agent a1, running two real processes of
// the pinned workload, is cut off from every server while the load goes
// on, then the cut heals. Its tasks keep running throughout (checked
// every 100 ms). A cut shorter than the heartbeat TTL leaves the node
// ready and the same processes running and reported; a longer one (every
// other soak round) lets the servers mark the node down, and after the
// heal the cell converges to the two wanted replicas, each running on a
// live process, with no other copy left. Recovery: from the heal until
// then.
func TestAgentPartitionedAndHealed(t *testing.T) {
	var pinned = func(r *run) []*api.Allocation {
		allocs, _, err := r.c.Client(ClientOptions{Attempt: 3 * time.Second, RetryFor: 5 * time.Second}).
			Allocations(context.Background(), "pinned", nil)
		if err != nil {
			r.t.Fatalf("allocations of pinned: %v", err)
		}
		return allocs
	}
	runScenario(t, scenario{
		cell: Options{HeartbeatTTL: agentTTL, Agents: []AgentSpec{
			{Name: "a1", Labels: []string{"role=pinned"}}, {Name: "a2", Labels: []string{"role=general"}}}},
		shortRounds: 1, soakRounds: 16, between: 150,
		setup: func(r *run) {
			cl := r.c.Client(ClientOptions{Attempt: 5 * time.Second, RetryFor: 10 * time.Second})
			if _, err := cl.RegisterWorkload(context.Background(), []byte(pinnedDoc)); err != nil {
				r.t.Fatal(err)
			}
			faultnet.Eventually(r.t, 60*time.Second, "two pinned replicas running", func() error {
				_, err := runningPIDs(pinned(r))
				return err
			})
		},
		teardown: func(r *run) {
			pids, _ := runningPIDs(pinned(r))
			cl := r.c.Client(ClientOptions{Attempt: 5 * time.Second, RetryFor: 10 * time.Second})
			if _, err := cl.StopWorkload(context.Background(), "pinned", true); err != nil {
				r.t.Fatal(err)
			}
			faultnet.Eventually(r.t, 30*time.Second, "the pinned tasks stopped", func() error {
				for _, pid := range pids {
					if alive(pid) {
						return fmt.Errorf("pid %d still runs", pid)
					}
				}
				return nil
			})
		},
		inject: func(r *run, round int) {
			c := r.c
			a1 := c.Agents[0]
			before, err := runningPIDs(pinned(r))
			if err != nil {
				r.t.Fatalf("round %d: before the cut: %v", round+1, err)
			}
			cutFor := agentTTL / 2
			long := soak() && round%2 == 1
			if long {
				cutFor = 2 * agentTTL
			}
			var servers []*faultnet.Host
			for _, s := range c.Servers {
				servers = append(servers, s.Host)
			}
			c.Net.Partition([]*faultnet.Host{a1.Host}, servers)
			for end := time.Now().Add(cutFor); time.Now().Before(end); {
				for _, pid := range before {
					if !alive(pid) {
						r.t.Fatalf("round %d: task pid %d died while its agent was cut off", round+1, pid)
					}
				}
				time.Sleep(100 * time.Millisecond) // the sampling period of the check
			}
			c.Net.HealAll()
			var after []int
			took := faultnet.Eventually(r.t, 60*time.Second, "node a1 ready and both replicas running on live processes", func() error {
				if err := c.nodeReady(a1.Name); err != nil {
					return err
				}
				after, err = runningPIDs(pinned(r))
				if err != nil {
					return err
				}
				if !long && fmt.Sprint(after) != fmt.Sprint(before) {
					return fmt.Errorf("running pids %v, want the same as before the cut %v", after, before)
				}
				return nil
			})
			// No copy beyond the two the cell runs: a replaced process is gone.
			faultnet.Eventually(r.t, 30*time.Second, "no process left beyond the running replicas", func() error {
				for _, pid := range before {
					if alive(pid) && !contains(after, pid) {
						return fmt.Errorf("pid %d runs but the cell runs %v", pid, after)
					}
				}
				return nil
			})
			r.t.Logf("round %d: a1 cut off for %v (TTL %v); tasks ran throughout (pids %v → %v); recovered %v after the heal",
				round+1, cutFor, agentTTL, before, after, took.Round(time.Millisecond))
			if long {
				r.measure("recovery after a cut longer than the TTL", took)
			} else {
				r.measure("recovery after a cut shorter than the TTL", took)
			}
		},
	})
}

// runningPIDs returns the pids of the running replicas of a workload of
// two, or an error unless exactly two run, each on a live process.
func runningPIDs(allocs []*api.Allocation) ([]int, error) {
	var pids []int
	for _, a := range allocs {
		if a.DesiredStatus != api.DesiredRun || a.ClientStatus != api.AllocRunning {
			continue
		}
		ts := a.TaskStates["sleeper"]
		if ts == nil || !alive(ts.PID) {
			return nil, fmt.Errorf("allocation %s is reported running but its task is %+v", a.ID, ts)
		}
		pids = append(pids, ts.PID)
	}
	if len(pids) != 2 {
		return nil, fmt.Errorf("%d replicas running, want 2", len(pids))
	}
	if pids[0] > pids[1] {
		pids[0], pids[1] = pids[1], pids[0]
	}
	return pids, nil
}

func alive(pid int) bool { return pid > 0 && syscall.Kill(pid, 0) == nil }

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
