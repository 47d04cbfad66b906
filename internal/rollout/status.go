package rollout

import (
	"fmt"
	"time"

	"github.com/strata-dev/strata/api"
)

// Progress counts a group's allocations of the deployment's version.
// versionAllocs are every allocation of the group whose version is at
// least the deployment's (live or not); oldLive the live ones of older
// specs. It also sets LastProgress: the latest time one became healthy,
// never before start.
func Progress(g *api.DeploymentGroup, p api.UpdatePolicy, versionAllocs []*api.Allocation, oldLive int, start, now time.Time) {
	g.Placed, g.Healthy, g.Unhealthy, g.OldRunning = 0, 0, 0, oldLive
	g.LastProgress = start
	for _, a := range versionAllocs {
		g.Placed++
		switch h, _ := AllocHealth(a, p, now); h {
		case Healthy:
			g.Healthy++
			if at := HealthyAt(a, p); at.After(g.LastProgress) {
				g.LastProgress = at
			}
		case Unhealthy:
			if a.DesiredStatus == api.DesiredStop && !a.Terminal() {
				g.Placed-- // stopped by the server (scaled down), not a failure
				continue
			}
			g.Unhealthy++
		}
	}
	g.Canaries = min(g.Placed, g.DesiredCanaries)
}

// Status decides a deployment's status from its groups' progress at now:
// failed when a group made no progress for its progressDeadline (or, with
// progressDeadline 0, has an unhealthy replacement); blocked when a
// replacement fits nowhere (blocked names the group and the scheduler's
// reason); paused while canaries wait for promotion; successful when
// every group runs only the new version, healthy; running otherwise. It
// returns when the status changes by the clock alone (the progress
// deadline).
func Status(d *api.Deployment, policies map[string]api.UpdatePolicy, blocked map[string]string, now time.Time) (status, desc string, lookAgain time.Time) {
	done, waiting := true, false
	for _, g := range d.Groups {
		p := policies[g.Name]
		switch {
		case p.ProgressDeadline == 0 && g.Unhealthy > 0:
			return api.DeploymentFailed, fmt.Sprintf("group %s: %d replacement(s) unhealthy", g.Name, g.Unhealthy), time.Time{}
		case p.ProgressDeadline > 0 && g.Healthy < g.Desired:
			by := g.LastProgress.Add(p.ProgressDeadline)
			if !now.Before(by) {
				return api.DeploymentFailed, fmt.Sprintf("group %s: no replacement became healthy within progressDeadline (%s); %d of %d healthy, %d unhealthy",
					g.Name, p.ProgressDeadline, g.Healthy, g.Desired, g.Unhealthy), time.Time{}
			}
			if lookAgain.IsZero() || by.Before(lookAgain) {
				lookAgain = by
			}
		}
		if g.OldRunning > 0 || g.Healthy < g.Desired || (g.DesiredCanaries > 0 && !g.Promoted) {
			done = false
		}
		if g.DesiredCanaries > 0 && !g.Promoted && g.Placed >= g.DesiredCanaries {
			waiting = true
		}
	}
	for _, g := range d.Groups {
		if reason, ok := blocked[g.Name]; ok {
			return api.DeploymentBlocked, fmt.Sprintf("group %s: replacements fit nowhere: %s (the old version keeps running)", g.Name, reason), lookAgain
		}
	}
	switch {
	case done:
		return api.DeploymentSuccessful, "every replica runs the new version, healthy", time.Time{}
	case waiting:
		return api.DeploymentPaused, "canaries placed: waiting for promotion (strata deployment promote)", lookAgain
	}
	return api.DeploymentRunning, "", lookAgain
}
