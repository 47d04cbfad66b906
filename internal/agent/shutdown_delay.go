package agent

import (
	"time"

	"github.com/strata-dev/strata/api"
)

// stopWhenTold is the stop the server asks for (desired status stop). An
// allocation that is healthy and whose group has a shutdownDelay (a group
// that offers a service has one by default) keeps running that long
// before its tasks are signalled: it left the service registry the
// moment it was told to stop (the registry lists only allocations wanted
// running), and clients that still hold the old list of endpoints are
// served meanwhile instead of refused (docs/health.md, "Graceful stop").
// An allocation that is not healthy is in no client's list and stops at
// once, and so does a preempted one, whose resources (ports) its
// preemptor holds already. It does not wait; a second call changes
// nothing.
func (ar *allocRunner) stopWhenTold() {
	ar.mu.Lock()
	if ar.stopTold {
		ar.mu.Unlock()
		return
	}
	ar.stopTold = true
	alloc := ar.alloc
	ar.mu.Unlock()
	delay := time.Duration(0)
	if alloc.TaskGroup != nil && alloc.PreemptedBy == "" {
		delay = alloc.TaskGroup.ShutdownDelay
	}
	if h := ar.health.Health(); delay <= 0 || h == nil || h.Status != api.HealthHealthy {
		ar.stop()
		return
	}
	ar.log.Info("allocation told to stop: its tasks are signalled after the shutdown delay", "shutdown_delay", delay)
	ar.agent.wg.Add(1)
	go func() {
		defer ar.agent.wg.Done()
		timer := time.NewTimer(delay)
		defer timer.Stop()
		select {
		case <-timer.C:
			ar.stop()
		case <-ar.agent.ctx.Done():
			// The agent is going away: the tasks keep running, and the
			// next agent, told again, waits again.
		}
	}()
}
