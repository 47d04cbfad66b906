package rollout

import (
	"time"

	"github.com/strata-dev/strata/api"
)

// Health is what a deployment knows about one replacement.
type Health int

const (
	// Pending: placed, not yet healthy, still within its healthy deadline.
	Pending Health = iota
	// Healthy: running for at least minHealthyTime.
	Healthy
	// Unhealthy: failed, lost, finished, or not healthy by its deadline.
	Unhealthy
)

func (h Health) String() string {
	switch h {
	case Healthy:
		return "healthy"
	case Unhealthy:
		return "unhealthy"
	}
	return "pending"
}

// AllocHealth is the one definition of a healthy allocation for
// deployments: its client status is running, and has been for at least
// p.MinHealthyTime (a task restart starts the count again), reached within
// p.HealthyDeadline of its placement. It returns when the verdict changes
// by the clock alone (zero when it will not): the reconciler looks again
// then. Readiness checks plug in here: an allocation whose checks have not
// passed is not running-and-ready, so it stays Pending.
func AllocHealth(a *api.Allocation, p api.UpdatePolicy, now time.Time) (Health, time.Time) {
	if a.Terminal() || a.DesiredStatus == api.DesiredStop {
		return Unhealthy, time.Time{}
	}
	deadline := a.CreateTime.Add(p.HealthyDeadline)
	if a.ClientStatus != api.AllocRunning {
		if !now.Before(deadline) {
			return Unhealthy, time.Time{}
		}
		return Pending, deadline
	}
	healthyAt := RunningSince(a).Add(p.MinHealthyTime)
	switch {
	case !now.Before(healthyAt):
		return Healthy, time.Time{}
	case healthyAt.After(deadline) && !now.Before(deadline):
		return Unhealthy, time.Time{}
	case healthyAt.After(deadline):
		return Pending, deadline
	}
	return Pending, healthyAt
}

// HealthyAt is when a healthy allocation became healthy.
func HealthyAt(a *api.Allocation, p api.UpdatePolicy) time.Time {
	return RunningSince(a).Add(p.MinHealthyTime)
}

// RunningSince is when the allocation last started running: its running
// status, or a task's later (re)start.
func RunningSince(a *api.Allocation) time.Time {
	since := a.ClientStatusTime
	if since.IsZero() {
		since = a.CreateTime
	}
	for _, ts := range a.TaskStates {
		if ts != nil && ts.StartedAt.After(since) {
			since = ts.StartedAt
		}
	}
	return since
}
