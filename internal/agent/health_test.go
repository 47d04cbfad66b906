package agent

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/health"
)

// switchProber answers every check with the outcome set last, and keeps
// the last target it was asked about.
type switchProber struct {
	mu   sync.Mutex
	out  health.Outcome
	last health.Target
}

func (p *switchProber) set(o health.Outcome) { p.mu.Lock(); p.out = o; p.mu.Unlock() }
func (p *switchProber) Probe(_ context.Context, t health.Target) health.Outcome {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last = t
	return p.out
}

func fastCheck(purpose string) api.Check {
	return api.Check{Name: "c", Type: api.CheckHTTP, Purpose: purpose, Port: "http", Path: "/",
		Interval: 100 * time.Millisecond, Timeout: 50 * time.Millisecond, SuccessThreshold: 1, FailureThreshold: 2}
}

func withPort(b *allocBuilder, port int) *allocBuilder {
	b.a.TaskGroup.Ports = []api.PortRequest{{Name: "http"}}
	b.a.Assignment.Ports = []api.AssignedPort{{Name: "http", Port: port}}
	return b
}

func TestReadinessIsReportedWithStatus(t *testing.T) {
	t.Parallel()
	srv := newFakeServer()
	prober := &switchProber{out: health.Outcome{OK: true, Output: "HTTP 200"}}
	ag := startAgent(t, srv, t.TempDir(), func(c *Config) { c.HealthProber = prober })
	alloc := withPort(newAlloc(ag.NodeID()).mockTask("web", nil).last(func(tk *api.Task) {
		tk.Checks = []api.Check{fastCheck(api.CheckReadiness)}
	}), 20005).build()
	srv.put(alloc)
	waitTask(t, srv, alloc.ID, "web", "healthy", func(u *api.AllocUpdate, _ *api.TaskState) bool {
		return u.Health != nil && u.Health.Status == api.HealthHealthy
	})
	prober.mu.Lock()
	target := prober.last
	prober.mu.Unlock()
	if target.Port != 20005 || target.Env["STRATA_PORT_HTTP"] != "20005" {
		t.Fatalf("check target port %d, env STRATA_PORT_HTTP=%q; want the assigned 20005", target.Port, target.Env["STRATA_PORT_HTTP"])
	}
	prober.set(health.Outcome{Output: "HTTP 503"})
	up := waitTask(t, srv, alloc.ID, "web", "unhealthy", func(u *api.AllocUpdate, _ *api.TaskState) bool {
		return u.Health != nil && u.Health.Status == api.HealthUnhealthy
	})
	if c := up.Health.Checks; len(c) != 1 || c[0].Status != api.CheckFailing || c[0].Output != "HTTP 503" || !strings.Contains(up.Health.Reason, "HTTP 503") {
		t.Fatalf("health %+v", up.Health)
	}
	if up.ClientStatus != api.AllocRunning || up.TaskStates["web"].Restarts != 0 {
		t.Fatalf("a readiness failure changed the task: %s %+v", up.ClientStatus, up.TaskStates["web"])
	}
}

func TestLivenessFailureRestartsThroughThePolicy(t *testing.T) {
	t.Parallel()
	srv := newFakeServer()
	prober := &switchProber{out: health.Outcome{Output: "connection refused"}}
	ag := startAgent(t, srv, t.TempDir(), func(c *Config) { c.HealthProber = prober })
	alloc := withPort(newAlloc(ag.NodeID()).mockTask("web", nil).last(func(tk *api.Task) {
		tk.Checks = []api.Check{fastCheck(api.CheckLiveness)}
	}), 20006).restart(api.RestartPolicy{Mode: api.RestartOnFailure, Attempts: 1, Delay: 10 * time.Millisecond, MaxDelay: 10 * time.Millisecond}).build()
	srv.put(alloc)
	// One restart is allowed; the second liveness failure fails the allocation.
	up := waitTask(t, srv, alloc.ID, "web", "failed for good", func(u *api.AllocUpdate, ts *api.TaskState) bool {
		return u.ClientStatus == api.AllocFailed
	})
	ts := up.TaskStates["web"]
	if ts.Restarts != 1 || !strings.Contains(ts.Message, "liveness check c failed 2 times: connection refused") {
		t.Fatalf("task %+v, want 1 restart and the liveness reason", ts)
	}
	if !strings.Contains(up.ClientReason, "liveness check c") {
		t.Fatalf("alloc reason %q", up.ClientReason)
	}
}
