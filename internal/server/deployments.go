package server

import (
	"context"
	"fmt"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/fsm"
	"github.com/strata-dev/strata/internal/scheduler"
	"github.com/strata-dev/strata/internal/state"
)

// Deployments (docs/deployments.md): the leader starts one with a
// destructive update of a running workload (in the upsert-workload entry),
// the scheduler moves it (rolling.go, in the plans it commits), users
// promote or fail it, and the leader reverts a failed one with autoRevert
// to the last stable version.

// The scheduler reads deployments through an optional interface: a
// signature that drifts would silently turn deployments off.
var (
	_ scheduler.DeploymentReader = (*state.Snapshot)(nil)
	_ scheduler.DeploymentReader = (*plannedState)(nil)
)

// registration builds the command that registers wl (validated, secrets
// sealed): its evaluation and, when it replaces the allocations of a
// running workload, its deployment.
func (s *Server) registration(wl *api.Workload, old *api.Workload, trigger string) *fsm.UpsertWorkload {
	cmd := &fsm.UpsertWorkload{Workload: wl, Eval: s.newEval(wl.Namespace, wl.Name, wl.Priority, trigger, "")}
	cmd.Deployment = newDeployment(old, wl, s.cfg.Now())
	if cmd.Deployment != nil {
		cmd.Deployment.ID = newID()
	}
	return cmd
}

// newDeployment returns the deployment of wl over old, nil when no group
// that ran before needs its allocations replaced (a new workload, a
// stopped one, or a change applied in place: count, labels, priority,
// update policy).
func newDeployment(old, wl *api.Workload, now time.Time) *api.Deployment {
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

// revertCommand builds the command that fails d and, when asked and a
// stable version is kept, registers that version again.
func (s *Server) revertCommand(snap *state.Snapshot, d *api.Deployment, reason string, revert bool) (*fsm.FailDeployment, error) {
	now := s.cfg.Now()
	cmd := &fsm.FailDeployment{ID: d.ID, Reason: reason, Time: now}
	cur := snap.Workload(d.Namespace, d.Workload)
	if cur != nil {
		cmd.Eval = s.newEval(d.Namespace, d.Workload, cur.Priority, api.TriggerDeployment, "")
	}
	if !revert || cur == nil || cur.Version != d.Version {
		return cmd, nil
	}
	stable := snap.LatestStableVersion(d.Namespace, d.Workload, d.Version)
	if stable == nil {
		cmd.Reason += "; no stable version to revert to"
		return cmd, nil
	}
	wl := copyWorkload(stable.Workload)
	wl.SubmitTime, wl.Stopped = now, false
	cmd.Revert = s.registration(wl, cur, api.TriggerDeployment)
	if cmd.Revert.Deployment != nil {
		// Reverting must not itself revert: a failing revert stops and waits.
		for _, g := range cmd.Revert.Deployment.Groups {
			g.AutoRevert = false
		}
	}
	cmd.Reason += fmt.Sprintf("; reverted to version %d", stable.Version)
	return cmd, nil
}

// copyWorkload copies a stored workload's top level and group list so that
// a new version can be made from it (group specs are immutable, shared).
func copyWorkload(w *api.Workload) *api.Workload {
	c := *w
	c.Groups = append([]*api.TaskGroup(nil), w.Groups...)
	c.Unenforced = append([]api.Notice(nil), w.Unenforced...)
	c.Version, c.CreateIndex, c.ModifyIndex = 0, 0, 0
	return &c
}

// watchReverts runs on the leader: a deployment the scheduler failed
// (deadline passed) whose groups ask for autoRevert gets its workload's
// last stable version registered again. kick wakes it after such a plan;
// a periodic pass covers a leader change in between.
func (s *Server) watchReverts(ctx context.Context) {
	tick := time.NewTicker(5 * time.Second)
	defer tick.Stop()
	tried := map[string]bool{}
	for {
		snap := s.State().Snapshot()
		for _, d := range snap.Deployments(nil) {
			if d.Status != api.DeploymentFailed || d.RevertedTo != 0 || !d.AutoRevert() || tried[d.ID] {
				continue
			}
			tried[d.ID] = true
			cmd, err := s.revertCommand(snap, d, d.StatusDescription, true)
			if err == nil && cmd.Revert != nil {
				_, err = s.propose(cmd)
			}
			if err != nil {
				s.logger.Error("auto-revert", "deployment", d.ID, "workload", d.Workload, "err", err)
				delete(tried, d.ID)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-s.revertKick:
		case <-tick.C:
		}
	}
}

// kickReverts wakes watchReverts without blocking.
func (s *Server) kickReverts() {
	select {
	case s.revertKick <- struct{}{}:
	default:
	}
}

// deploymentWatches reports whether an agent's report moves a deployment:
// an allocation of a workload under an unfinished deployment starts
// running (its minHealthyTime begins; the scheduler then asks to look
// again when it is up) or fails.
func deploymentWatches(snap *state.Snapshot, old *api.Allocation, u *api.AllocUpdate) bool {
	if old.DesiredStatus != api.DesiredRun || u.ClientStatus == old.ClientStatus {
		return false
	}
	d := snap.LatestDeployment(old.Namespace, old.Workload)
	return d != nil && !api.DeploymentTerminal(d.Status)
}
