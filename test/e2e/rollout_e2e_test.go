package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
)

// rolloutSpec is a 10-replica HTTP service with a readiness check; %s are
// the healthserver binary and its arguments (the version, and
// "never-ready" for a broken update). The check gives a starting server
// 2s and 5 failures: run --wait fails on an allocation whose readiness
// check fails, and a loaded 2-vCPU machine starts a task slowly.
const rolloutSpec = `
apiVersion: strata.dev/v1
kind: Workload
metadata: {name: roll}
spec:
  groups:
    - name: web
      replicas: 10
      ports: [{name: http}]
      services: [{name: roll-web, port: http}]
      update: {maxParallel: 2, minHealthyTime: 1s, healthyDeadline: 8s, progressDeadline: 10s, autoRevert: true}
      tasks:
        - name: server
          command: [%q, %s]
          resources: {cpu: 50m, memory: 48Mi}
          checks:
            - {name: ready, type: http, port: http, path: /ready, interval: 200ms, timeout: 150ms, initialDelay: 2s, failureThreshold: 5}
`

const (
	// clientLag is how late the client's requesters see a new list of
	// endpoints (serviceClient.lag): below the group's shutdownDelay
	// (2s by default for a group that offers a service).
	clientLag          = 500 * time.Millisecond
	rolloutReplicas    = 10
	rolloutMaxParallel = 2
	rolloutProgress    = 10 * time.Second
)

// rolloutCell is a server and three agents on one host, each agent with
// its own dynamic port range (they share the loopback), running version
// v1 of rolloutSpec healthy, and a client of its service sending
// requests to the endpoints the registry lists.
func rolloutCell(t *testing.T) (*cell, string, *serviceClient) {
	bin := healthServer(t)
	c := newCell(t, 10*time.Second)
	for i, name := range []string{"n1", "n2", "n3"} {
		lo := 21000 + 1000*i
		c.startAgent(name, "--dynamic-ports", fmt.Sprintf("%d-%d", lo, lo+999))
	}
	c.mustStrata("run", "-f", c.writeSpec("roll-v1", fmt.Sprintf(rolloutSpec, bin, `"v1"`)), "--wait", "--timeout", "60s", "--min-healthy", "1s")
	sc := c.watchService("roll-web", 2, 10*time.Millisecond, clientLag)
	c.eventually(20*time.Second, "the registry lists every replica", func() error {
		if n := sc.listed(); n != rolloutReplicas {
			return fmt.Errorf("%d listed", n)
		}
		return nil
	})
	sc.measure()
	return c, bin, sc
}

// finalDeployment waits for the deployment of version and returns it once its
// status is final.
func (c *cell) finalDeployment(workload string, version uint64, within time.Duration) *api.Deployment {
	c.t.Helper()
	var d *api.Deployment
	c.eventually(within, fmt.Sprintf("the deployment of version %d ends", version), func() error {
		list, _, err := c.client().Deployments(context.Background(), workload, nil)
		if err != nil {
			return err
		}
		for _, x := range list {
			if x.Version == version {
				d = x
				if api.DeploymentTerminal(x.Status) {
					return nil
				}
				return fmt.Errorf("status %s: %s", x.Status, x.StatusDescription)
			}
		}
		return fmt.Errorf("no deployment of version %d among %d", version, len(list))
	})
	return d
}

func (c *cell) workloadVersion(name string) uint64 {
	c.t.Helper()
	versions, _, err := c.client().WorkloadVersions(context.Background(), name, nil)
	if err != nil || len(versions) == 0 {
		c.t.Fatalf("versions of %s: %d, %v", name, len(versions), err)
	}
	newest := versions[0].Version
	for _, v := range versions {
		newest = max(newest, v.Version)
	}
	return newest
}

// TestRollingUpdateUnderTraffic rolls a 10-replica HTTP service with a
// readiness check to a new version on a three-agent cell while a client
// sends requests to the endpoints the service registry lists: no request
// fails, and the registry never lists fewer than replicas − maxParallel
// (docs/reliability.md, "Rolling update under traffic").
func TestRollingUpdateUnderTraffic(t *testing.T) {
	c, bin, sc := rolloutCell(t)
	from := c.workloadVersion("roll")
	start := time.Now()
	c.mustStrata("run", "-f", c.writeSpec("roll-v2", fmt.Sprintf(rolloutSpec, bin, `"v2"`)))
	d := c.finalDeployment("roll", from+1, 50*time.Second)
	took := time.Since(start)
	if d.Status != api.DeploymentSuccessful {
		t.Fatalf("deployment %s: %s", d.Status, d.StatusDescription)
	}
	sc.resetAnswers()
	// The old replicas leave the list at once but serve for their
	// shutdown delay: then every answer is v2's.
	c.eventually(15*time.Second, "every answer comes from v2", func() error {
		got := sc.answered()
		sc.resetAnswers()
		if got["v1"] > 0 || got["v2"] == 0 {
			return fmt.Errorf("answers since the last look %v", got)
		}
		return nil
	})
	sc.stop()
	sent, failed, minListed, lists, failures := sc.report()
	t.Logf("rolling update of %d replicas (maxParallel %d): %v from submit to successful; %d requests, %d failed; fewest endpoints listed %d over %d list changes",
		rolloutReplicas, rolloutMaxParallel, took.Round(100*time.Millisecond), sent, failed, minListed, lists)
	if failed != 0 {
		t.Errorf("%d of %d requests failed; first: %s", failed, sent, strings.Join(failures, "\n"))
	}
	if minListed < rolloutReplicas-rolloutMaxParallel {
		t.Errorf("the registry listed %d endpoints at one point, below replicas − maxParallel = %d", minListed, rolloutReplicas-rolloutMaxParallel)
	}
	if sent < 100 {
		t.Errorf("only %d requests sent: the client did not measure the update", sent)
	}
}

// TestBrokenUpdateRevertsWithinProgressDeadline submits a version whose
// readiness check never passes: the deployment fails once
// progressDeadline passes without a healthy replacement, the last stable
// version is registered again, the broken replacements go, and meanwhile
// the old version serves every request with never fewer than replicas −
// maxParallel listed.
func TestBrokenUpdateRevertsWithinProgressDeadline(t *testing.T) {
	c, bin, sc := rolloutCell(t)
	from := c.workloadVersion("roll")
	start := time.Now()
	c.mustStrata("run", "-f", c.writeSpec("roll-broken", fmt.Sprintf(rolloutSpec, bin, `"v2", "never-ready"`)))
	d := c.finalDeployment("roll", from+1, rolloutProgress+20*time.Second)
	failedAfter := time.Since(start)
	// The revert registers the stable version (from) again as a new one.
	if d.Status != api.DeploymentFailed || d.RevertedTo != from+2 {
		t.Fatalf("deployment %s (%s), reverted to %d; want failed and version %d (version %d again)", d.Status, d.StatusDescription, d.RevertedTo, from+2, from)
	}
	c.eventually(20*time.Second, "the revert is done: only v1 runs", func() error {
		var v1, other int
		for _, a := range c.allocs("roll") {
			if a.Terminal() || a.DesiredStatus != api.DesiredRun {
				if a.ClientStatus == api.AllocRunning {
					other++ // a broken replacement still stopping
				}
				continue
			}
			if strings.Contains(strings.Join(a.TaskGroup.Tasks[0].Command, " "), "never-ready") {
				other++
			} else if a.Healthy() {
				v1++
			}
		}
		if v1 != rolloutReplicas || other != 0 {
			return fmt.Errorf("%d healthy v1, %d broken still there", v1, other)
		}
		return nil
	})
	reverted := time.Since(start)
	sc.stop()
	sent, failed, minListed, lists, failures := sc.report()
	t.Logf("broken update (progressDeadline %v): failed and reverted %v after submit, broken replacements gone after %v; %d requests, %d failed; fewest endpoints listed %d over %d list changes",
		rolloutProgress, failedAfter.Round(100*time.Millisecond), reverted.Round(100*time.Millisecond), sent, failed, minListed, lists)
	// The deadline runs from the deployment's start; the evaluation that
	// fails it and the revert's registration follow within a few seconds
	// on a loaded machine.
	if failedAfter > rolloutProgress+5*time.Second {
		t.Errorf("the deployment failed %v after submit, want within progressDeadline (%v) and a few seconds", failedAfter, rolloutProgress)
	}
	if failed != 0 {
		t.Errorf("%d of %d requests failed; first: %s", failed, sent, strings.Join(failures, "\n"))
	}
	if minListed < rolloutReplicas-rolloutMaxParallel {
		t.Errorf("the registry listed %d endpoints at one point, below replicas − maxParallel = %d", minListed, rolloutReplicas-rolloutMaxParallel)
	}
	if got := sc.answered(); got["v2"] > 0 {
		t.Errorf("the broken version answered %d requests: it was listed", got["v2"])
	}
}

// TestDrainOfAServiceUnderTraffic drains the agent that runs the most
// replicas while the client sends requests: every replica there moves
// under the default budget (maxUnavailable 1), each old one stops only
// once its replacement passes its readiness check, no request fails, and
// the registry never lists fewer than replicas − 1.
func TestDrainOfAServiceUnderTraffic(t *testing.T) {
	c, _, sc := rolloutCell(t)
	perNode := map[string]int{}
	busiest := ""
	for _, a := range runningAllocs(c.allocs("roll")) {
		perNode[a.NodeName]++
		if busiest == "" || perNode[a.NodeName] > perNode[busiest] {
			busiest = a.NodeName
		}
	}
	start := time.Now()
	out := c.mustStrata("node", "drain", busiest, "--watch", "--deadline", "5m")
	took := time.Since(start)
	if !strings.Contains(out, "drain of "+busiest+" done") {
		t.Fatalf("drain --watch said:\n%s", out)
	}
	sc.stop()
	sent, failed, minListed, lists, failures := sc.report()
	t.Logf("drain of %s (%d of %d replicas, maxUnavailable 1): %v; %d requests, %d failed; fewest endpoints listed %d over %d list changes",
		busiest, perNode[busiest], rolloutReplicas, took.Round(100*time.Millisecond), sent, failed, minListed, lists)
	if failed != 0 {
		t.Errorf("%d of %d requests failed; first: %s", failed, sent, strings.Join(failures, "\n"))
	}
	if minListed < rolloutReplicas-1 {
		t.Errorf("the registry listed %d endpoints at one point, below replicas − maxUnavailable = %d", minListed, rolloutReplicas-1)
	}
}
