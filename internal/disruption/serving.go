package disruption

import "github.com/strata-dev/strata/api"

// Serving reports whether an allocation serves its replica, the
// "serving" of a group's budget: it is wanted running, it runs, and, when
// its agent reports health (every real agent does), it is healthy (every
// task runs and every readiness check passes: api.Allocation.Healthy). A
// replica that runs but is not ready yet is out of the service registry,
// so it is out of service. Nodes that report no health at all (the
// simulator's, fake agents) are taken at their running status, as
// deployments take them (internal/rollout).
func Serving(a *api.Allocation) bool {
	if a == nil || a.DesiredStatus != api.DesiredRun || a.ClientStatus != api.AllocRunning {
		return false
	}
	return a.Health == nil || a.Health.Status == api.HealthHealthy
}
