package scheduler

import (
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/disruption"
	"github.com/strata-dev/strata/internal/rollout"
)

// DeploymentReader is what a State offers when it keeps deployments (the
// server's store does): the workload's newest deployment, nil when none.
// Without it every update still rolls (replacements beside the old copies,
// old ones stopped once healthy) but nothing is recorded, canaries are not
// held for promotion and no deadline fails anything.
type DeploymentReader interface {
	LatestDeployment(namespace, workload string) *api.Deployment
}

// rolling applies internal/rollout to a workload's groups during one
// reconciliation and gathers the deployment's progress.
type rolling struct {
	w      *api.Workload
	d      *api.Deployment // active or halted deployment of w; nil when none
	allocs []*api.Allocation
	now    time.Time
	out    *api.DeploymentProgress
	specs  *specCache
}

func newRolling(w *api.Workload, d *api.Deployment, allocs []*api.Allocation, now time.Time) *rolling {
	r := &rolling{w: w, allocs: allocs, now: now, specs: newSpecCache()}
	if d != nil && d.Version <= w.Version && d.Status != api.DeploymentCancelled && d.Status != api.DeploymentSuccessful {
		r.d = d
		if !api.DeploymentTerminal(d.Status) {
			r.out = &api.DeploymentProgress{ID: d.ID, Status: d.Status, StatusDescription: d.StatusDescription}
		}
	}
	return r
}

// group decides the rolling update of g over its slots: old allocations
// whose replacement is healthy are stopped (into rec), and the returned
// set says which outdated slots may get a replacement now.
func (r *rolling) group(g *api.TaskGroup, slots *slotTable, rec *reconciliation) map[int]bool {
	p := g.UpdatePolicyOf()
	if g.Gang != nil {
		// A gang is placed all-or-nothing, so its new version is too: every
		// member beside the old gang at once (no canaries), and each old
		// member stops once its replacement is healthy.
		p.MaxParallel, p.Canary, p.Stagger = max(p.MaxParallel, g.Replicas), 0, 0
	}
	in := rollout.Group{Policy: p, Replicas: g.Replicas, MaxUnavailable: disruption.MaxUnavailable(g), StopFirst: g.AtMostOnce}
	var where []int
	for idx, s := range slots.inOrder() { // an index without allocations has nothing to roll
		if s.outdated == nil {
			switch {
			case in.StopFirst:
				r.stopFirstSlot(&in, p, s, rec)
			case s.keep != nil && s.keep.ClientStatus == api.AllocRunning:
				in.HealthyOthers++
			}
			continue
		}
		rs := rollout.Slot{Old: s.outdated, New: s.keep}
		if s.dead != nil && !r.specs.changed(s.dead.TaskGroup, g) {
			rs.Failed = s.dead
		}
		for _, a := range []*api.Allocation{rs.New, rs.Failed} {
			if a != nil && a.CreateTime.After(in.LastPlaced) {
				in.LastPlaced = a.CreateTime
			}
		}
		in.Slots = append(in.Slots, rs)
		where = append(where, idx)
	}
	var dg *api.DeploymentGroup
	if r.d != nil {
		dg = r.d.Group(g.Name)
	}
	if dg != nil {
		in.Promoted = dg.Promoted
		in.Halted = api.DeploymentTerminal(r.d.Status)
	} else {
		in.Promoted = true // no deployment holds canaries for promotion
	}
	dec := rollout.Decide(in, r.now)
	if !dec.LookAgain.IsZero() {
		rec.lookAgainAt(dec.LookAgain)
	}
	allowed := make(map[int]bool)
	oldLive := len(in.Slots)
	for i, act := range dec.Actions {
		switch act {
		case rollout.StopOld:
			rec.stop(in.Slots[i].Old, reasonUpdated, false)
			oldLive--
		case rollout.Place:
			if in.StopFirst {
				rec.stop(in.Slots[i].Old, reasonUpdatedStopFirst, false)
				oldLive--
				continue // placed once the old copy has stopped (mover.awaitsStop)
			}
			allowed[where[i]] = true
		}
	}
	if r.out != nil && dg != nil {
		r.out.Groups = append(r.out.Groups, r.groupProgress(g, p, dg, dec.Promoted, oldLive))
	}
	return allowed
}

// stopFirstSlot counts, for an at-most-once group, a slot that runs no
// old copy: a healthy allocation of the new spec, or one in flight (a
// replacement not yet healthy, or an old copy this update stopped whose
// replacement waits).
func (r *rolling) stopFirstSlot(in *rollout.Group, p api.UpdatePolicy, s *slot, rec *reconciliation) {
	if s.keep == nil {
		if d := s.dead; d != nil && d.DesiredStatus == api.DesiredStop && d.DesiredReason == reasonUpdatedStopFirst {
			in.InFlight++
		}
		return
	}
	h, until := rollout.AllocHealth(s.keep, p, r.now)
	if !until.IsZero() {
		rec.lookAgainAt(until)
	}
	if h == rollout.Healthy {
		in.HealthyOthers++
	} else {
		in.InFlight++
	}
}

func (r *rolling) groupProgress(g *api.TaskGroup, p api.UpdatePolicy, dg *api.DeploymentGroup, promoted bool, oldLive int) *api.DeploymentGroup {
	out := *dg
	out.Desired = g.Replicas
	out.Promoted = promoted
	var mine []*api.Allocation
	for _, a := range r.allocs {
		// The new spec's allocations: every live one (a revert finds the
		// old copies still running) and the replacements of this
		// deployment that died.
		if a.Group == g.Name && (live(a) || a.WorkloadVersion >= r.d.Version) && !r.specs.changed(a.TaskGroup, g) {
			if a.DesiredStatus == api.DesiredStop && a.DesiredReason == reasonScaledDown {
				continue
			}
			mine = append(mine, a)
		}
	}
	rollout.Progress(&out, p, mine, oldLive, r.d.CreateTime, r.now)
	return &out
}

// progress returns the deployment's progress, nil when there is no
// active deployment.
func (r *rolling) progress() *api.DeploymentProgress { return r.out }

// finishDeployment completes the plan's deployment progress once placement
// is known: a group whose replacements fit nowhere blocks it with the
// scheduler's reason, and the deadlines decide failure.
func finishDeployment(plan *api.Plan, w *api.Workload, d *api.Deployment, rec *reconciliation, now time.Time) {
	if rec.deployment == nil || d == nil {
		return
	}
	prog := rec.deployment
	policies := make(map[string]api.UpdatePolicy, len(w.Groups))
	for _, g := range w.Groups {
		policies[g.Name] = g.UpdatePolicyOf()
	}
	placed := map[string]int{}
	for _, as := range plan.Place {
		for _, a := range as {
			placed[a.Group]++
		}
	}
	for _, g := range prog.Groups {
		g.Placed += placed[g.Name]
	}
	blocked := map[string]string{}
	for _, f := range plan.Failures {
		blocked[f.Group] = f.Summary
	}
	view := d.Copy()
	view.Groups = prog.Groups
	status, desc, lookAgain := rollout.Status(view, policies, blocked, now)
	prog.Status, prog.StatusDescription = status, desc
	if !lookAgain.IsZero() {
		rec.lookAgainAt(lookAgain)
	}
	plan.Deployment = prog
}
