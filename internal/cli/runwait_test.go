package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
)

// waitCell builds what `strata run --wait` sees: a workload at a version,
// its latest evaluation and its allocations.
type waitCell struct {
	w      *api.Workload
	allocs []*api.Allocation
}

func newWaitCell(version uint64, command string, replicas int) *waitCell {
	tg := &api.TaskGroup{Name: "web", Replicas: replicas, Tasks: []*api.Task{{Name: "t", Command: []string{command}}}}
	return &waitCell{w: &api.Workload{Name: "w", Version: version, Groups: []*api.TaskGroup{tg}}}
}

// alloc adds an allocation of version v running command, in status client.
func (c *waitCell) alloc(id string, v uint64, command, client string, health string, ts *api.TaskState) *api.Allocation {
	tg := &api.TaskGroup{Name: "web", Replicas: 99, Tasks: []*api.Task{{Name: "t", Command: []string{command}}}}
	a := &api.Allocation{ID: id, Workload: "w", Group: "web", WorkloadVersion: v, TaskGroup: tg,
		DesiredStatus: api.DesiredRun, ClientStatus: client, NodeName: "n1"}
	if health != "" {
		a.Health = &api.AllocHealth{Status: health}
	}
	if ts == nil {
		ts = &api.TaskState{State: api.TaskRunning}
	}
	a.TaskStates = map[string]*api.TaskState{"t": ts}
	c.allocs = append(c.allocs, a)
	return a
}

func (c *waitCell) status() *api.WorkloadStatus {
	st := &api.WorkloadStatus{Workload: c.w, LatestEval: &api.Evaluation{Status: api.EvalComplete, CreateIndex: 10}}
	for _, g := range c.w.Groups {
		st.Groups = append(st.Groups, api.GroupStatus{Name: g.Name, Desired: g.Replicas})
	}
	return st
}

var waitReg = &api.RegisterResponse{Name: "w", Version: 2, Index: 10}

// TestWaitIsNotFooledByAStartedTask is the observed defect: --wait
// reported success as soon as the task started, though it crashed a
// second later. A running allocation must stay healthy for minHealthy
// before it counts, and a crash in that time fails the wait.
func TestWaitIsNotFooledByAStartedTask(t *testing.T) {
	t0 := time.Unix(1000, 0)
	mem := &waitMemory{minHealthy: 3 * time.Second}
	c := newWaitCell(2, "web", 1)
	a := c.alloc("a1", 2, "web", api.AllocRunning, api.HealthHealthy, nil)
	if v := judgeWait(waitReg, c.status(), c.allocs, t0, mem); v.done || v.fail != "" {
		t.Fatalf("just started: %+v, want still waiting", v)
	}
	// A second later the task crashed and its restart policy restarts it.
	a.TaskStates["t"] = &api.TaskState{State: api.TaskPending, ExitCode: 1, Restarts: 1, Message: "exit code 1; restarting in 1s"}
	a.Health = &api.AllocHealth{Status: api.HealthPending, Reason: "task t is not running"}
	v := judgeWait(waitReg, c.status(), c.allocs, t0.Add(time.Second), mem)
	if v.fail == "" || !strings.Contains(v.fail, "exit code 1") {
		t.Fatalf("after a crash: %+v, want a failure naming the exit", v)
	}
}

// TestWaitCountsOnlyTheSubmittedVersion is the second observed defect:
// during an update the old version's running allocations were counted.
func TestWaitCountsOnlyTheSubmittedVersion(t *testing.T) {
	t0 := time.Unix(1000, 0)
	mem := &waitMemory{minHealthy: time.Second}
	c := newWaitCell(2, "web-v2", 2)
	c.alloc("old1", 1, "web-v1", api.AllocRunning, api.HealthHealthy, nil)
	c.alloc("old2", 1, "web-v1", api.AllocRunning, api.HealthHealthy, nil)
	c.alloc("new1", 2, "web-v2", api.AllocPending, "", &api.TaskState{State: api.TaskPending})
	for _, at := range []time.Time{t0, t0.Add(time.Minute)} {
		if v := judgeWait(waitReg, c.status(), c.allocs, at, mem); v.done || v.fail != "" {
			t.Fatalf("at %v: %+v, want still waiting (only old allocations run)", at, v)
		}
	}
}

func TestJudgeWait(t *testing.T) {
	t0 := time.Unix(1000, 0)
	crashed := &api.TaskState{State: api.TaskPending, Restarts: 1, ExitCode: 2, Message: "exit code 2; restarting in 1s"}
	oom := &api.TaskState{State: api.TaskDead, Failed: true, OOMKilled: true, Message: "OOM killed (memory limit 64MiB)"}
	cases := []struct {
		name  string
		build func(c *waitCell)
		later time.Duration // second look after this long
		done  bool
		fail  string
	}{
		{"healthy long enough", func(c *waitCell) {
			c.alloc("a", 2, "web", api.AllocRunning, api.HealthHealthy, nil)
		}, 5 * time.Second, true, ""},
		{"an unchanged allocation of an earlier version counts (scale-up)", func(c *waitCell) {
			c.alloc("a", 1, "web", api.AllocRunning, api.HealthHealthy, nil)
		}, 5 * time.Second, true, ""},
		{"readiness still pending", func(c *waitCell) {
			c.alloc("a", 2, "web", api.AllocRunning, api.HealthPending, nil)
		}, 5 * time.Second, false, ""},
		{"unhealthy fails with the check's reason", func(c *waitCell) {
			a := c.alloc("a", 2, "web", api.AllocRunning, api.HealthUnhealthy, nil)
			a.Health.Reason = "check ready: HTTP 500"
		}, 0, false, "HTTP 500"},
		{"a crash of this version fails", func(c *waitCell) {
			c.alloc("a", 2, "web", api.AllocRunning, api.HealthPending, crashed)
		}, 0, false, "exit code 2"},
		{"an OOM kill fails", func(c *waitCell) {
			a := c.alloc("a", 2, "web", api.AllocFailed, "", oom)
			a.ClientReason = "task t: OOM killed (memory limit 64MiB)"
		}, 0, false, "OOM killed"},
		{"a crash of the old version does not fail the new one", func(c *waitCell) {
			c.alloc("old", 1, "web-old", api.AllocRunning, api.HealthPending, crashed)
			c.alloc("a", 2, "web", api.AllocRunning, api.HealthHealthy, nil)
		}, 5 * time.Second, true, ""},
		{"a newer version supersedes the wait", func(c *waitCell) {
			c.w.Version = 3
		}, 0, false, "version 3"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newWaitCell(2, "web", 1)
			tc.build(c)
			mem := &waitMemory{minHealthy: 3 * time.Second}
			v := judgeWait(waitReg, c.status(), c.allocs, t0, mem)
			if tc.later > 0 && v.fail == "" {
				v = judgeWait(waitReg, c.status(), c.allocs, t0.Add(tc.later), mem)
			}
			if v.done != tc.done || (tc.fail == "") != (v.fail == "") || !strings.Contains(v.fail, tc.fail) {
				t.Fatalf("got %+v, want done=%v fail~%q", v, tc.done, tc.fail)
			}
		})
	}
}

// TestWaitAgreesWithTheSchedulerOnTheCurrentSpec: whether an allocation
// runs the submitted spec was decided twice, by the scheduler and by this
// copy, and the copy drifted: a new version that changes only how a group
// rolls out, how many may be disrupted or how long a stop waits replaces
// nothing (the scheduler keeps the allocations), but --wait took them for
// the old version and waited for replacements that never come.
func TestWaitAgreesWithTheSchedulerOnTheCurrentSpec(t *testing.T) {
	t0 := time.Unix(1000, 0)
	for _, tc := range []struct {
		name   string
		change func(g *api.TaskGroup)
	}{
		{"update policy", func(g *api.TaskGroup) { g.Update = &api.UpdatePolicy{MaxParallel: 3} }},
		{"disruption budget", func(g *api.TaskGroup) { g.Disruption = &api.DisruptionPolicy{MaxUnavailable: 2} }},
		{"shutdown delay", func(g *api.TaskGroup) { g.ShutdownDelay = 5 * time.Second }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := &waitMemory{minHealthy: time.Second}
			c := newWaitCell(2, "web", 1)
			tc.change(c.w.Groups[0])
			c.alloc("a", 1, "web", api.AllocRunning, api.HealthHealthy, nil) // version 1, kept in place
			judgeWait(waitReg, c.status(), c.allocs, t0, mem)
			if v := judgeWait(waitReg, c.status(), c.allocs, t0.Add(5*time.Second), mem); !v.done {
				t.Fatalf("%+v: want done, the allocation runs the submitted spec", v)
			}
		})
	}
}
