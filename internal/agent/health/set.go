package health

import (
	"fmt"
	"time"

	"github.com/strata-dev/strata/api"
)

// Target is one check with what it needs to run: the port its name
// resolves to on this allocation, and for exec checks the task's
// environment and working directory.
type Target struct {
	Check   api.Check
	Task    string // the task the check belongs to, or "" for a service's
	Service string
	Port    int // resolved from Check.Port; 0 for exec checks
	Env     map[string]string
	Dir     string
	// Identity is who an exec check runs as (the task's user); nil runs
	// it as the agent, for tests. IdentityErr, when set, fails the check.
	Identity    *Identity
	IdentityErr string
}

// Identity is a uid and gid.
type Identity struct{ UID, GID int }

// TaskInfo is what exec checks of a task need: its environment, working
// directory and user.
type TaskInfo struct {
	Env         map[string]string
	Dir         string
	Identity    *Identity
	IdentityErr string
}

// Outcome is what one run of a check found.
type Outcome struct {
	OK     bool
	Output string
}

// maxOutput bounds the output kept of one run.
const maxOutput = 256

// tracker is the state of one check: pure, driven by Set.
type tracker struct {
	target    Target
	active    bool // its task (or, for a service, every task) runs
	status    string
	since     time.Time
	output    string
	successes int
	failures  int
	next      time.Time // when it is due, while active
}

func (t *tracker) start(now time.Time) {
	t.active = true
	t.setStatus(api.CheckPending, now)
	t.successes, t.failures, t.output = 0, 0, ""
	t.next = now.Add(t.target.Check.InitialDelay)
}

func (t *tracker) stop(now time.Time) {
	t.active = false
	t.setStatus(api.CheckPending, now)
	t.successes, t.failures = 0, 0
}

func (t *tracker) setStatus(s string, now time.Time) bool {
	if t.status == s {
		return false
	}
	t.status, t.since = s, now
	return true
}

// observe records one run's outcome at now and schedules the next run.
// It reports whether the check's status changed.
func (t *tracker) observe(now time.Time, o Outcome) bool {
	c := &t.target.Check
	t.next = now.Add(c.Interval)
	if len(o.Output) > maxOutput {
		o.Output = o.Output[:maxOutput]
	}
	t.output = o.Output
	if o.OK {
		t.successes++
		t.failures = 0
		if t.successes >= max(c.SuccessThreshold, 1) {
			return t.setStatus(api.CheckPassing, now)
		}
		return false
	}
	t.failures++
	t.successes = 0
	if t.failures >= max(c.FailureThreshold, 1) {
		return t.setStatus(api.CheckFailing, now)
	}
	return false
}

// Set is the checks of one allocation and the health they make. It is
// not safe for concurrent use; the Runner serialises access.
type Set struct {
	trackers []*tracker
	running  map[string]bool // tasks that run now
	tasks    int
	status   string
	since    time.Time
}

// NewSet builds the checks of alloc: every task's, then every service's,
// with port names resolved against the allocation's assigned ports. info
// gives each task's environment, working directory and user for exec
// checks; a service's exec checks run as the first task.
func NewSet(alloc *api.Allocation, info func(task string) TaskInfo) *Set {
	s := &Set{running: map[string]bool{}}
	tg := alloc.TaskGroup
	if tg == nil {
		return s
	}
	s.tasks = len(tg.Tasks)
	target := func(c api.Check, task, service, infoOf string) *tracker {
		ti := info(infoOf)
		return &tracker{status: api.CheckPending, target: Target{Check: c, Task: task, Service: service,
			Port: alloc.Port(c.Port), Env: ti.Env, Dir: ti.Dir, Identity: ti.Identity, IdentityErr: ti.IdentityErr}}
	}
	for _, task := range tg.Tasks {
		for _, c := range task.Checks {
			s.trackers = append(s.trackers, target(c, task.Name, "", task.Name))
		}
	}
	first := ""
	if len(tg.Tasks) > 0 {
		first = tg.Tasks[0].Name
	}
	for _, svc := range tg.Services {
		for _, c := range svc.Checks {
			s.trackers = append(s.trackers, target(c, "", svc.Name, first))
		}
	}
	return s
}

// Empty reports whether the allocation has no checks at all.
func (s *Set) Empty() bool { return len(s.trackers) == 0 }

// TaskStarted (re)starts the checks of a task that (re)started at now:
// counts start over and the first run waits out the initial delay. A
// service's checks start once every task runs.
func (s *Set) TaskStarted(task string, now time.Time) {
	s.running[task] = true
	all := s.allRunning()
	for _, t := range s.trackers {
		switch {
		case t.target.Task == task:
			t.start(now)
		case t.target.Service != "" && all && !t.active:
			t.start(now)
		}
	}
}

// TaskStopped pauses the checks of a task that no longer runs (and every
// service's): nothing is probed until it starts again.
func (s *Set) TaskStopped(task string, now time.Time) {
	delete(s.running, task)
	for _, t := range s.trackers {
		if t.target.Task == task || t.target.Service != "" {
			t.stop(now)
		}
	}
}

func (s *Set) allRunning() bool { return len(s.running) == s.tasks }

// Due returns the indexes of the active checks due at now.
func (s *Set) Due(now time.Time) []int {
	var out []int
	for i, t := range s.trackers {
		if t.active && !now.Before(t.next) {
			out = append(out, i)
		}
	}
	return out
}

// Next is when the next active check is due; zero when none is active.
func (s *Set) Next() time.Time {
	var next time.Time
	for _, t := range s.trackers {
		if t.active && (next.IsZero() || t.next.Before(next)) {
			next = t.next
		}
	}
	return next
}

// Target returns check i.
func (s *Set) Target(i int) Target { return s.trackers[i].target }

// Record stores the outcome of check i, run at now. It reports whether the
// check's status changed and, for a liveness check that has just become
// failing, the reason to restart its task (restart is "" otherwise).
func (s *Set) Record(i int, now time.Time, o Outcome) (changed bool, restart string) {
	t := s.trackers[i]
	if !t.active {
		return false, "" // its task stopped while the probe ran
	}
	changed = t.observe(now, o)
	if changed && t.status == api.CheckFailing && t.target.Check.Purpose == api.CheckLiveness {
		restart = fmt.Sprintf("liveness check %s failed %d times: %s", t.target.Check.Name, t.failures, t.output)
	}
	return changed, restart
}

// Health is the allocation's health at now: pending while a task does not
// run or a readiness check has not passed yet, unhealthy while any check
// fails, healthy otherwise (without readiness checks: once every task
// runs). Since moves only when the status does.
func (s *Set) Health(now time.Time) *api.AllocHealth {
	h := &api.AllocHealth{}
	status, reason := api.HealthHealthy, ""
	for _, t := range s.trackers {
		c := &t.target.Check
		h.Checks = append(h.Checks, api.CheckResult{
			Name: c.Name, Task: t.target.Task, Service: t.target.Service, Type: c.Type, Purpose: c.Purpose,
			Status: t.status, Output: t.output, Since: t.since, Failures: t.failures,
		})
		switch {
		case t.status == api.CheckFailing && status != api.HealthUnhealthy:
			status, reason = api.HealthUnhealthy, fmt.Sprintf("%s check %s %s: %s", c.Purpose, c.Name, owner(t.target), t.output)
		case t.status == api.CheckPending && c.Purpose == api.CheckReadiness && status == api.HealthHealthy:
			status, reason = api.HealthPending, fmt.Sprintf("readiness check %s %s has not passed yet", c.Name, owner(t.target))
		}
	}
	if !s.allRunning() && status != api.HealthUnhealthy {
		status, reason = api.HealthPending, fmt.Sprintf("%d of %d tasks run", len(s.running), s.tasks)
	}
	if s.status != status {
		s.status, s.since = status, now
	}
	h.Status, h.Reason, h.Since = status, reason, s.since
	return h
}

func owner(t Target) string {
	if t.Task != "" {
		return "of task " + t.Task
	}
	return "of service " + t.Service
}
