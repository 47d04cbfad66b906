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

// AllocHealth is the one definition of a healthy replacement for
// deployments, built on api.Allocation.Healthy (the definition the
// service registry and `strata run --wait` use too): the allocation is
// healthy by that definition, and has been for at least p.MinHealthyTime
// (a task restart or a readiness check that failed starts the count
// again), reached within p.HealthyDeadline of its placement. An
// allocation whose node reports no health at all (a simulated node, an
// agent of before health checks) counts as healthy while it runs. It
// returns when the verdict changes by the clock alone (zero when it will
// not): the reconciler looks again then.
func AllocHealth(a *api.Allocation, p api.UpdatePolicy, now time.Time) (Health, time.Time) {
	if a.Terminal() || a.DesiredStatus == api.DesiredStop {
		return Unhealthy, time.Time{}
	}
	deadline := a.CreateTime.Add(p.HealthyDeadline)
	since, ready := readySince(a)
	if !ready {
		if !now.Before(deadline) {
			return Unhealthy, time.Time{}
		}
		return Pending, deadline
	}
	healthyAt := since.Add(p.MinHealthyTime)
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
	since, _ := readySince(a)
	return since.Add(p.MinHealthyTime)
}

// readySince reports whether a is ready to count (Allocation.Healthy, or
// running on a node that reports no health) and since when: it last
// started running, or later turned healthy.
func readySince(a *api.Allocation) (time.Time, bool) {
	if a.ClientStatus != api.AllocRunning {
		return time.Time{}, false
	}
	since := RunningSince(a)
	if a.Health == nil {
		return since, true
	}
	if !a.Healthy() {
		return time.Time{}, false
	}
	if a.Health.Since.After(since) {
		since = a.Health.Since
	}
	return since, true
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
