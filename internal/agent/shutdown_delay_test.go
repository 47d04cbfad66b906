package agent

import (
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent/health"
)

// TestShutdownDelay: an allocation told to stop keeps its tasks running
// for its group's shutdownDelay when it is healthy (it has left the
// service registry, and clients with the old list must still be served),
// and stops at once when it is not (no client lists it), when it has no
// delay, or when it was preempted (its preemptor holds its ports).
//
// The e2e test TestRollingUpdateUnderTraffic found the defect: a client
// that sees a new list of endpoints 500 ms late had 66 of 3,372 requests
// refused during a rolling update, each by an old replica killed the
// moment it was told to stop.
func TestShutdownDelay(t *testing.T) {
	const delay = 700 * time.Millisecond
	tests := []struct {
		name      string
		delay     time.Duration
		ready     bool // the readiness check passes
		preempted bool
		waits     bool
	}{
		{"healthy with a delay waits it out", delay, true, false, true},
		{"no delay stops at once", 0, true, false, false},
		{"unhealthy stops at once: no client lists it", delay, false, false, false},
		{"preempted stops at once: its preemptor holds its ports", delay, true, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newFakeServer()
			prober := &switchProber{out: health.Outcome{OK: tc.ready, Output: "HTTP 200"}}
			ag := startAgent(t, srv, t.TempDir(), func(c *Config) { c.HealthProber = prober })
			alloc := withPort(newAlloc(ag.NodeID()).mockTask("web", nil).last(func(tk *api.Task) {
				tk.Checks = []api.Check{fastCheck(api.CheckReadiness)}
			}), 20005).build()
			alloc.TaskGroup.ShutdownDelay = tc.delay
			alloc.TaskGroup.Services = []api.Service{{Name: "web", Port: "http"}}
			srv.put(alloc)
			want := api.HealthHealthy
			if !tc.ready {
				want = api.HealthUnhealthy
			}
			waitTask(t, srv, alloc.ID, "web", want, func(u *api.AllocUpdate, ts *api.TaskState) bool {
				return ts.State == api.TaskRunning && u.Health != nil && u.Health.Status == want
			})
			told := time.Now()
			if tc.preempted {
				srv.mu.Lock()
				c := srv.allocs[alloc.ID].Copy()
				c.PreemptedBy = "other"
				srv.allocs[alloc.ID] = c
				srv.mu.Unlock()
			}
			srv.setDesired(alloc.ID, api.DesiredStop)
			up := waitTask(t, srv, alloc.ID, "web", "stopped", func(_ *api.AllocUpdate, ts *api.TaskState) bool {
				return ts.State == api.TaskDead
			})
			ran := up.TaskStates["web"].FinishedAt.Sub(told)
			if tc.waits && ran < tc.delay {
				t.Fatalf("the task stopped %v after the stop was told, before the shutdown delay (%v)", ran, tc.delay)
			}
			if !tc.waits && ran >= delay {
				t.Fatalf("the task stopped %v after the stop was told, want at once (well under %v)", ran, delay)
			}
		})
	}
}
