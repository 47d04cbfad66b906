package trigger

import (
	"fmt"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/fsm"
	"github.com/strata-dev/strata/internal/scheduler"
	"github.com/strata-dev/strata/internal/state"
)

// Registration builds the command that registers wl (validated, secrets
// sealed, stamped) over old, the stored version (nil for none): its
// evaluation and, when it replaces the allocations of a running workload,
// its deployment.
func (m *Maker) Registration(wl, old *api.Workload, trigger string) *fsm.UpsertWorkload {
	cmd := &fsm.UpsertWorkload{Workload: wl, Eval: m.Eval(wl.Namespace, wl.Name, wl.Priority, trigger, "")}
	cmd.Deployment = NewDeployment(old, wl, m.Now())
	if cmd.Deployment != nil {
		cmd.Deployment.ID = m.NewID()
	}
	return cmd
}

// Stop builds the command that stops (or purges) workload name of
// namespace ns, whose priority is priority.
func (m *Maker) Stop(ns, name string, priority int, purge bool) *fsm.StopWorkload {
	return &fsm.StopWorkload{Namespace: ns, Name: name, Purge: purge, Eval: m.Eval(ns, name, priority, api.TriggerWorkloadStop, ""),
		Time: m.Now()}
}

// NewDeployment returns the deployment of wl over old, nil when no group
// that ran before needs its allocations replaced (a new workload, a
// stopped one, or a change applied in place: count, labels, priority,
// update policy). Its ID is the caller's to set.
func NewDeployment(old, wl *api.Workload, now time.Time) *api.Deployment {
	if old == nil || old.Stopped {
		return nil
	}
	d := &api.Deployment{Namespace: api.NamespaceOf(wl.Namespace), Workload: wl.Name, FromVersion: old.Version, Status: api.DeploymentRunning, CreateTime: now}
	for _, g := range wl.Groups {
		var before *api.TaskGroup
		for _, og := range old.Groups {
			if og.Name == g.Name {
				before = og
			}
		}
		if before == nil || before.Replicas == 0 || !scheduler.NeedsReplacement(before, g) {
			continue
		}
		p := g.UpdatePolicyOf()
		d.Groups = append(d.Groups, &api.DeploymentGroup{Name: g.Name, Desired: g.Replicas, DesiredCanaries: p.Canary,
			AutoPromote: p.AutoPromote, AutoRevert: p.AutoRevert, LastProgress: now})
	}
	if len(d.Groups) == 0 {
		return nil
	}
	return d
}

// Promote builds the command that promotes d's canaries of groups (all
// when empty), with the evaluation that moves the deployment on.
func (m *Maker) Promote(snap *state.Snapshot, d *api.Deployment, groups []string) *fsm.PromoteDeployment {
	prio := 0
	if wl := snap.Workload(d.Namespace, d.Workload); wl != nil {
		prio = wl.Priority
	}
	return &fsm.PromoteDeployment{ID: d.ID, Groups: groups, Eval: m.Eval(d.Namespace, d.Workload, prio, api.TriggerDeployment, ""), Time: m.Now()}
}

// Revert builds the command that fails d and, when asked and a stable
// version is kept, registers that version again.
func (m *Maker) Revert(snap *state.Snapshot, d *api.Deployment, reason string, revert bool) *fsm.FailDeployment {
	now := m.Now()
	cmd := &fsm.FailDeployment{ID: d.ID, Reason: reason, Time: now}
	cur := snap.Workload(d.Namespace, d.Workload)
	if cur != nil {
		cmd.Eval = m.Eval(d.Namespace, d.Workload, cur.Priority, api.TriggerDeployment, "")
	}
	if !revert || cur == nil || cur.Version != d.Version {
		return cmd
	}
	stable := snap.LatestStableVersion(d.Namespace, d.Workload, d.Version)
	if stable == nil {
		cmd.Reason += "; no stable version to revert to"
		return cmd
	}
	wl := CopyWorkload(stable.Workload)
	wl.SubmitTime, wl.Stopped = now, false
	cmd.Revert = m.Registration(wl, cur, api.TriggerDeployment)
	if cmd.Revert.Deployment != nil {
		// Reverting must not itself revert: a failing revert stops and waits.
		for _, g := range cmd.Revert.Deployment.Groups {
			g.AutoRevert = false
		}
	}
	cmd.Reason += fmt.Sprintf("; reverted to version %d", stable.Version)
	return cmd
}

// CopyWorkload copies a stored workload's top level and group list so that
// a new version can be made from it (group specs are immutable, shared).
func CopyWorkload(w *api.Workload) *api.Workload {
	c := *w
	c.Groups = append([]*api.TaskGroup(nil), w.Groups...)
	c.Unenforced = append([]api.Notice(nil), w.Unenforced...)
	c.Version, c.CreateIndex, c.ModifyIndex = 0, 0, 0
	return &c
}
