package health

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
)

// fakeClock is a Clock the test moves by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}
func (c *fakeClock) After(time.Duration) <-chan time.Time { return make(chan time.Time) }
func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// scriptProber answers each check (by name) from a script of outcomes,
// repeating the last one; a "hang" outcome waits for the timeout.
type scriptProber struct {
	mu     sync.Mutex
	script map[string][]Outcome
	calls  map[string]int
}

var hang = Outcome{Output: "hang"}

func (p *scriptProber) Probe(ctx context.Context, t Target) Outcome {
	p.mu.Lock()
	s := p.script[t.Check.Name]
	k := p.calls[t.Check.Name]
	p.calls[t.Check.Name]++
	p.mu.Unlock()
	o := s[min(k, len(s)-1)]
	if o == hang {
		<-ctx.Done()
		return Outcome{Output: "context done"}
	}
	return o
}

var (
	pass = Outcome{OK: true, Output: "HTTP 200"}
	fail = Outcome{Output: "HTTP 500"}
)

func check(name, purpose string, interval time.Duration, delay time.Duration, succ, fails int) api.Check {
	return api.Check{Name: name, Type: api.CheckHTTP, Purpose: purpose, Port: "http", Interval: interval,
		Timeout: interval / 2, InitialDelay: delay, SuccessThreshold: succ, FailureThreshold: fails}
}

func allocWith(tasks map[string][]api.Check, services ...api.Service) *api.Allocation {
	tg := &api.TaskGroup{Name: "g", Ports: []api.PortRequest{{Name: "http"}}, Services: services}
	for _, name := range []string{"a", "b"} {
		if checks, ok := tasks[name]; ok {
			tg.Tasks = append(tg.Tasks, &api.Task{Name: name, Checks: checks})
		}
	}
	return &api.Allocation{ID: "x", TaskGroup: tg, Assignment: api.Assignment{Ports: []api.AssignedPort{{Name: "http", Port: 20000}}}}
}

type harness struct {
	t        *testing.T
	clock    *fakeClock
	prober   *scriptProber
	r        *Runner
	changes  int
	restarts []string
}

func newHarness(t *testing.T, a *api.Allocation, script map[string][]Outcome) *harness {
	h := &harness{t: t, clock: &fakeClock{now: time.Unix(1000, 0)}, prober: &scriptProber{script: script, calls: map[string]int{}}}
	set := NewSet(a, func(string) TaskInfo { return TaskInfo{} })
	h.r = NewRunner(set, h.prober, h.clock, func() { h.changes++ }, func(task, reason string) { h.restarts = append(h.restarts, task+": "+reason) })
	return h
}

// step moves the clock by d and runs what is due.
func (h *harness) step(d time.Duration) *api.AllocHealth {
	h.clock.advance(d)
	h.r.RunDue(context.Background())
	return h.r.Health()
}

func (h *harness) want(hl *api.AllocHealth, status, reason string) {
	h.t.Helper()
	if hl.Status != status || !strings.Contains(hl.Reason, reason) {
		h.t.Fatalf("health %s (%s), want %s (~%q)", hl.Status, hl.Reason, status, reason)
	}
}

func TestReadinessThresholdsAndInitialDelay(t *testing.T) {
	a := allocWith(map[string][]api.Check{"a": {check("ready", api.CheckReadiness, 10*time.Second, 15*time.Second, 2, 3)}})
	h := newHarness(t, a, map[string][]Outcome{"ready": {pass, pass, fail, fail, fail, pass, pass}})
	h.want(h.r.Health(), api.HealthPending, "0 of 1 tasks run")
	h.r.TaskStarted("a")
	h.want(h.step(10*time.Second), api.HealthPending, "has not passed yet") // inside the initial delay
	if n := h.prober.calls["ready"]; n != 0 {
		t.Fatalf("probed %d times during the initial delay", n)
	}
	h.want(h.step(5*time.Second), api.HealthPending, "has not passed yet") // 1 pass of 2
	h.want(h.step(10*time.Second), api.HealthHealthy, "")                  // 2 passes
	since := h.r.Health().Since
	h.want(h.step(10*time.Second), api.HealthHealthy, "") // 1 failure of 3
	h.want(h.step(10*time.Second), api.HealthHealthy, "") // 2
	hl := h.step(10 * time.Second)                        // 3: failing
	h.want(hl, api.HealthUnhealthy, "readiness check ready of task a: HTTP 500")
	if hl.Checks[0].Status != api.CheckFailing || hl.Checks[0].Failures != 3 || hl.Checks[0].Output != "HTTP 500" {
		t.Fatalf("check result %+v", hl.Checks[0])
	}
	if !hl.Since.After(since) {
		t.Fatalf("since did not move on a status change: %v then %v", since, hl.Since)
	}
	h.want(h.step(10*time.Second), api.HealthUnhealthy, "") // 1 pass of 2
	h.want(h.step(10*time.Second), api.HealthHealthy, "")
	if len(h.restarts) != 0 {
		t.Fatalf("a readiness check restarted a task: %v", h.restarts)
	}
}

func TestLivenessFailureAsksForOneRestart(t *testing.T) {
	a := allocWith(map[string][]api.Check{"a": {check("alive", api.CheckLiveness, time.Second, 0, 1, 2)}})
	h := newHarness(t, a, map[string][]Outcome{"alive": {pass, fail, fail, fail, fail}})
	h.r.TaskStarted("a")
	h.want(h.step(0), api.HealthHealthy, "") // liveness does not gate readiness
	h.step(time.Second)
	if len(h.restarts) != 0 {
		t.Fatalf("restart after one failure of two: %v", h.restarts)
	}
	h.want(h.step(time.Second), api.HealthUnhealthy, "liveness check alive")
	h.step(time.Second) // still failing: no second request
	if len(h.restarts) != 1 || !strings.HasPrefix(h.restarts[0], "a: liveness check alive failed 2 times: HTTP 500") {
		t.Fatalf("restarts %q, want one for task a", h.restarts)
	}
	// The task runner restarts the task: checks start over.
	h.r.TaskStopped("a")
	h.want(h.r.Health(), api.HealthPending, "0 of 1 tasks run")
	h.r.TaskStarted("a")
	if hl := h.r.Health(); hl.Checks[0].Status != api.CheckPending || hl.Checks[0].Failures != 0 {
		t.Fatalf("checks did not start over: %+v", hl.Checks[0])
	}
}

func TestNoChecksHealthyOnceEveryTaskRuns(t *testing.T) {
	a := allocWith(map[string][]api.Check{"a": nil, "b": nil})
	h := newHarness(t, a, nil)
	h.r.TaskStarted("a")
	h.want(h.r.Health(), api.HealthPending, "1 of 2 tasks run")
	h.r.TaskStarted("b")
	h.want(h.r.Health(), api.HealthHealthy, "")
	h.r.TaskStopped("b")
	h.want(h.r.Health(), api.HealthPending, "1 of 2 tasks run")
}

func TestServiceChecksStartWhenEveryTaskRuns(t *testing.T) {
	svc := api.Service{Name: "web", Port: "http", Checks: []api.Check{check("svc", api.CheckReadiness, time.Second, 0, 1, 1)}}
	a := allocWith(map[string][]api.Check{"a": nil, "b": nil}, svc)
	h := newHarness(t, a, map[string][]Outcome{"svc": {pass}})
	h.r.TaskStarted("a")
	h.step(time.Second)
	if n := h.prober.calls["svc"]; n != 0 {
		t.Fatalf("service check probed %d times before every task ran", n)
	}
	h.r.TaskStarted("b")
	hl := h.step(0)
	h.want(hl, api.HealthHealthy, "")
	if c := hl.Checks[0]; c.Service != "web" || c.Task != "" || c.Status != api.CheckPassing {
		t.Fatalf("service check result %+v", c)
	}
	if tg := h.r.set.Target(0); tg.Port != 20000 {
		t.Fatalf("service check port %d, want the allocation's 20000", tg.Port)
	}
}

func TestCheckTimeoutIsAFailure(t *testing.T) {
	c := check("slow", api.CheckReadiness, 200*time.Millisecond, 0, 1, 1)
	c.Timeout = time.Millisecond
	a := allocWith(map[string][]api.Check{"a": {c}})
	h := newHarness(t, a, map[string][]Outcome{"slow": {hang}})
	h.r.TaskStarted("a")
	hl := h.step(0)
	h.want(hl, api.HealthUnhealthy, "timed out after 1ms")
	if h.changes == 0 {
		t.Fatal("a status change was not reported")
	}
}
