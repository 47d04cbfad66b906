package server_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/server/servertest"
)

// rollingWorkload is a 3-replica mock workload; cmd changes the spec
// (a destructive update), update is the group's update block.
func rollingWorkload(cmd, update string) []byte {
	return []byte(fmt.Sprintf(`
apiVersion: strata.dev/v1
kind: Workload
metadata: {name: web}
spec:
  groups:
    - name: g
      replicas: 3
      update: {%s}
      tasks:
        - {name: t, driver: mock, command: [%q], resources: {cpu: 100m, memory: 64Mi}}
`, update, cmd))
}

// fastUpdate makes replacements healthy after 200 ms of running.
const fastUpdate = "minHealthyTime: 200ms, healthyDeadline: 20s, progressDeadline: 30s"

// agentSim reports every pending allocation of the node running, and
// those whose command is fail failed: the agent of these tests.
func agentSim(t *testing.T, agent *api.Client, user *api.Client, fail string) {
	t.Helper()
	var ups []*api.AllocUpdate
	for _, a := range allocsOf(t, user, "web") {
		if a.DesiredStatus != api.DesiredRun || a.ClientStatus != api.AllocPending {
			continue
		}
		st := api.AllocRunning
		if a.TaskGroup.Tasks[0].Command[0] == fail {
			st = api.AllocFailed
		}
		ups = append(ups, &api.AllocUpdate{ID: a.ID, ClientStatus: st})
	}
	if len(ups) > 0 {
		if err := agent.UpdateAllocations(context.Background(), ups); err != nil {
			t.Fatal(err)
		}
	}
}

// running counts live running allocations by command.
func running(t *testing.T, cl *api.Client) map[string]int {
	out := map[string]int{}
	for _, a := range allocsOf(t, cl, "web") {
		if a.DesiredStatus == api.DesiredRun && a.ClientStatus == api.AllocRunning {
			out[a.TaskGroup.Tasks[0].Command[0]]++
		}
	}
	return out
}

func startDeploymentCell(t *testing.T) (user, agent *api.Client) {
	c := servertest.Start(t, 1, nil)
	user, agent = c.Client(), c.AgentClient("n1")
	if err := agent.RegisterNode(context.Background(), mockNode("n1")); err != nil {
		t.Fatal(err)
	}
	if _, err := user.RegisterWorkload(context.Background(), rollingWorkload("v1", fastUpdate)); err != nil {
		t.Fatal(err)
	}
	await(t, 10*time.Second, "v1 running", func() error {
		agentSim(t, agent, user, "")
		if n := running(t, user)["v1"]; n != 3 {
			return fmt.Errorf("%d of v1 running", n)
		}
		return nil
	})
	return user, agent
}

func latestDeployment(t *testing.T, cl *api.Client) *api.Deployment {
	ds, _, err := cl.Deployments(context.Background(), "web", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) == 0 {
		return nil
	}
	return ds[0]
}

// TestRollingUpdateThroughTheServer: the defect (running went to
// 0/3 during an update) through the whole server: the old version keeps
// 3 running until the new one has 3 healthy, and the deployment says so.
func TestRollingUpdateThroughTheServer(t *testing.T) {
	user, agent := startDeploymentCell(t)
	ctx := context.Background()
	reg, err := user.RegisterWorkload(ctx, rollingWorkload("v2", fastUpdate))
	if err != nil {
		t.Fatal(err)
	}
	if reg.DeploymentID == "" {
		t.Fatal("a destructive update started no deployment")
	}
	await(t, 30*time.Second, "deployment successful", func() error {
		agentSim(t, agent, user, "")
		r := running(t, user)
		if r["v1"]+r["v2"] < 3 {
			t.Fatalf("running %v: below 3 during the update", r)
		}
		d := latestDeployment(t, user)
		if d.Status != api.DeploymentSuccessful {
			return fmt.Errorf("deployment %s (%s), running %v", d.Status, d.StatusDescription, r)
		}
		if r["v2"] != 3 || r["v1"] != 0 {
			return fmt.Errorf("running %v", r)
		}
		return nil
	})
	vs, _, err := user.WorkloadVersions(ctx, "web", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 2 || !vs[0].Stable || !vs[1].Stable {
		t.Fatalf("history: %d versions, stable %v %v", len(vs), vs[0].Stable, len(vs) > 1 && vs[1].Stable)
	}
}

// TestCanaryPromotion: canaries run beside the whole old version until
// promoted.
func TestCanaryPromotion(t *testing.T) {
	user, agent := startDeploymentCell(t)
	ctx := context.Background()
	if _, err := user.RegisterWorkload(ctx, rollingWorkload("v2", fastUpdate+", canary: 1")); err != nil {
		t.Fatal(err)
	}
	await(t, 20*time.Second, "paused for promotion", func() error {
		agentSim(t, agent, user, "")
		d := latestDeployment(t, user)
		if d.Status != api.DeploymentPaused || d.Groups[0].Healthy < 1 {
			return fmt.Errorf("deployment %s, %+v", d.Status, *d.Groups[0])
		}
		return nil
	})
	if r := running(t, user); r["v1"] != 3 || r["v2"] != 1 {
		t.Fatalf("before promotion: running %v, want 3 v1 and 1 canary", r)
	}
	d := latestDeployment(t, user)
	if _, err := user.PromoteDeployment(ctx, d.ID[:8], nil); err != nil {
		t.Fatal(err)
	}
	await(t, 30*time.Second, "deployment successful", func() error {
		agentSim(t, agent, user, "")
		if d := latestDeployment(t, user); d.Status != api.DeploymentSuccessful {
			return fmt.Errorf("deployment %s", d.Status)
		}
		return nil
	})
	if r := running(t, user); r["v2"] != 3 || r["v1"] != 0 {
		t.Fatalf("after: running %v", r)
	}
	events, _, err := user.Events(ctx, "web", nil)
	if err != nil {
		t.Fatal(err)
	}
	var said []string
	for _, e := range events {
		if e.Type == api.EventDeployment {
			said = append(said, e.Message)
		}
	}
	want := []string{"started: version 2 replaces version 1", "paused", "promoted", "successful"}
	if len(said) < len(want) {
		t.Fatalf("deployment events %q, want them to say %q", said, want)
	}
	for _, w := range want {
		if !slices.ContainsFunc(said, func(s string) bool { return strings.Contains(s, w) }) {
			t.Fatalf("deployment events %q say nothing of %q", said, w)
		}
	}
}

// TestFailedDeploymentRevertsAutomatically: a replacement that crashes
// fails the deployment (progressDeadline 0); with autoRevert the last
// stable version is registered again, and the old version never stopped.
func TestFailedDeploymentRevertsAutomatically(t *testing.T) {
	user, agent := startDeploymentCell(t)
	ctx := context.Background()
	update := "minHealthyTime: 200ms, healthyDeadline: 20s, progressDeadline: 0s, autoRevert: true"
	if _, err := user.RegisterWorkload(ctx, rollingWorkload("broken", update)); err != nil {
		t.Fatal(err)
	}
	await(t, 30*time.Second, "reverted", func() error {
		agentSim(t, agent, user, "broken")
		if n := running(t, user)["v1"]; n != 3 {
			t.Fatalf("v1 running %d during a failing update", n)
		}
		ds, _, err := user.Deployments(ctx, "web", nil)
		if err != nil {
			return err
		}
		for _, d := range ds {
			if d.Version == 2 && d.Status == api.DeploymentFailed && d.RevertedTo == 3 {
				return nil
			}
		}
		return fmt.Errorf("%d deployments, newest %s %q", len(ds), ds[0].Status, ds[0].StatusDescription)
	})
	vs, _, err := user.WorkloadVersions(ctx, "web", nil)
	if err != nil {
		t.Fatal(err)
	}
	if last := vs[len(vs)-1]; last.Version != 3 || last.Workload.Groups[0].Tasks[0].Command[0] != "v1" {
		t.Fatalf("newest version %d runs %v, want 3 running v1 again", last.Version, last.Workload.Groups[0].Tasks[0].Command)
	}
}

// TestOperatorFailsDeployment: strata deployment fail stops the rollout;
// with autoRevert it reverts, without it the old version keeps running.
func TestOperatorFailsDeployment(t *testing.T) {
	user, agent := startDeploymentCell(t)
	ctx := context.Background()
	reg, err := user.RegisterWorkload(ctx, rollingWorkload("v2", "minHealthyTime: 1h, healthyDeadline: 2h, progressDeadline: 3h"))
	if err != nil {
		t.Fatal(err)
	}
	agentSim(t, agent, user, "")
	resp, err := user.FailDeployment(ctx, reg.DeploymentID, "looks wrong")
	if err != nil {
		t.Fatal(err)
	}
	if resp.RevertedTo != 0 {
		t.Fatalf("reverted to %d without autoRevert", resp.RevertedTo)
	}
	d := latestDeployment(t, user)
	if d.Status != api.DeploymentFailed || d.StatusDescription != "failed by an operator: looks wrong" {
		t.Fatalf("deployment %s %q", d.Status, d.StatusDescription)
	}
	if _, err := user.FailDeployment(ctx, reg.DeploymentID, ""); err == nil {
		t.Fatal("failing a failed deployment again was accepted")
	}
	if r := running(t, user); r["v1"] != 3 {
		t.Fatalf("running %v, want the 3 old", r)
	}
}

// TestInPlaceUpdateKeepsAllocations: a change of count, priority or
// update policy replaces no allocation; the running ones move to the new
// version (and priority) where they are, and no deployment starts.
func TestInPlaceUpdateKeepsAllocations(t *testing.T) {
	user, agent := startDeploymentCell(t)
	ctx := context.Background()
	before := map[string]bool{}
	for _, a := range allocsOf(t, user, "web") {
		before[a.ID] = true
	}
	doc := strings.Replace(string(rollingWorkload("v1", "maxParallel: 2, "+fastUpdate)), "replicas: 3", "replicas: 4", 1)
	doc = strings.Replace(doc, "spec:\n", "spec:\n  priority: 900\n", 1)
	reg, err := user.RegisterWorkload(ctx, []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if reg.DeploymentID != "" {
		t.Fatalf("an in-place change started deployment %s", reg.DeploymentID)
	}
	await(t, 10*time.Second, "moved in place", func() error {
		agentSim(t, agent, user, "")
		allocs := allocsOf(t, user, "web")
		moved := 0
		for _, a := range allocs {
			if before[a.ID] && a.WorkloadVersion == 2 && a.Priority == 900 && a.DesiredStatus == api.DesiredRun {
				moved++
			}
		}
		if moved != 3 || len(allocs) != 4 {
			return fmt.Errorf("%d of 3 moved, %d allocations", moved, len(allocs))
		}
		return nil
	})
}

// TestPlanWritesNothing: a dry run of an update that fits nowhere reports
// the scheduler's reason, stops nothing, and leaves the state as it was.
func TestPlanWritesNothing(t *testing.T) {
	user, _ := startDeploymentCell(t)
	ctx := context.Background()
	before, _, err := user.WorkloadVersions(ctx, "web", nil)
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Replace(string(rollingWorkload("v2", fastUpdate)), "cpu: 100m", "cpu: 64", 1)
	plan, err := user.PlanWorkload(ctx, []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Failures) != 1 || !strings.Contains(plan.Failures[0].Summary, "insufficient cpu") || len(plan.Stops) != 0 || plan.Deployment == nil {
		t.Fatalf("plan: %+v", plan)
	}
	after, _, err := user.WorkloadVersions(ctx, "web", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) || latestDeployment(t, user) != nil {
		t.Fatal("the dry run wrote something")
	}
	bad := string(rollingWorkload("v2", "canary: 5"))
	if _, err := user.PlanWorkload(ctx, []byte(bad)); err == nil || !strings.Contains(err.Error(), "spec.groups[0].update.canary") {
		t.Fatalf("plan of a bad update block: %v", err)
	}
}
