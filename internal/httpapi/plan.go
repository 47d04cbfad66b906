package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/httpapi/route"
	"github.com/strata-dev/strata/internal/scheduler"
	"github.com/strata-dev/strata/internal/state"
	"github.com/strata-dev/strata/internal/trigger"
)

// handlePlanWorkload is `strata plan`: the spec is validated as for a
// registration, then the scheduler runs on the current state with the
// new version in place of the stored one. Nothing is written; the answer
// carries the stored workload's modify index for `run --check-index`.
func (s *API) handlePlanWorkload(w http.ResponseWriter, r *http.Request) error {
	wl, snap, ns, err := s.submission(w, r)
	if err != nil {
		return err
	}
	old := snap.Workload(ns, wl.Name)
	now := s.cfg.Now()
	wl.SubmitTime = now
	wl.Version = state.NextWorkloadVersion(old)
	resp := &api.PlanResponse{Workload: wl.Name, Diff: diffWorkloads(old, wl)}
	if old != nil {
		resp.CheckIndex = old.ModifyIndex
	}
	if d := trigger.NewDeployment(old, wl, now); d != nil {
		d.ID, d.Version = "(planned)", wl.Version
		resp.Deployment = d
	}
	eval := &api.Evaluation{ID: "plan-" + wl.Name, Namespace: ns, Workload: wl.Name, Priority: wl.Priority, TriggeredBy: api.TriggerWorkloadRegister}
	plan := s.leader.DryRun(snap, func(tables scheduler.State) scheduler.State {
		return &plannedState{State: tables, snap: snap, wl: wl, d: resp.Deployment}
	}, eval, now)
	resp.Failures = plan.Failures
	summarizePlan(resp, plan, wl, snap)
	route.WriteJSON(w, http.StatusOK, resp)
	return nil
}

// plannedState is the snapshot with the planned version in place of the
// stored one (and the deployment it would start). The scheduler reads
// deployments through an optional interface: a signature that drifts
// would silently turn them off, hence the check below.
type plannedState struct {
	scheduler.State
	snap *state.Snapshot
	wl   *api.Workload
	d    *api.Deployment
}

func (p *plannedState) planned(ns, name string) bool {
	return api.NamespaceOf(ns) == p.wl.Namespace && name == p.wl.Name
}

func (p *plannedState) Workload(ns, name string) *api.Workload {
	if p.planned(ns, name) {
		return p.wl
	}
	return p.State.Workload(ns, name)
}

func (p *plannedState) LatestDeployment(ns, name string) *api.Deployment {
	if p.planned(ns, name) && p.d != nil {
		return p.d
	}
	return p.snap.LatestDeployment(ns, name)
}

// summarizePlan counts a plan's effects per group.
func summarizePlan(resp *api.PlanResponse, plan *api.Plan, wl *api.Workload, snap *state.Snapshot) {
	groups := map[string]*api.PlanGroup{}
	for _, g := range wl.Groups {
		pg := &api.PlanGroup{Name: g.Name}
		groups[g.Name] = pg
		if resp.Deployment != nil && resp.Deployment.Group(g.Name) != nil {
			p := g.UpdatePolicyOf()
			pg.Rolling = fmt.Sprintf("rolling: %d at a time, each healthy after %s running, old copies stop once their replacement is healthy", p.MaxParallel, p.MinHealthyTime)
			if p.Canary > 0 {
				pg.Rolling = fmt.Sprintf("%d canaries beside the old version until promoted, then ", p.Canary) + pg.Rolling
			}
		}
	}
	group := func(name string) *api.PlanGroup {
		if pg := groups[name]; pg != nil {
			return pg
		}
		pg := &api.PlanGroup{Name: name}
		groups[name] = pg
		return pg
	}
	placedGroup := map[string]string{}
	for _, as := range plan.Place {
		for _, a := range as {
			group(a.Group).Place++
			placedGroup[a.ID] = a.Group
		}
	}
	for node, stops := range plan.Stop {
		for _, st := range stops {
			a := snap.Alloc(st.AllocID)
			if a == nil {
				continue
			}
			ps := api.PlanStop{AllocID: st.AllocID, Workload: a.Workload, Group: a.Group, NodeID: node, Reason: st.Reason}
			if st.PreemptedBy != "" {
				resp.Preempted = append(resp.Preempted, ps)
				group(placedGroup[st.PreemptedBy]).Preempt++
				continue
			}
			group(a.Group).Stop++
			resp.Stops = append(resp.Stops, ps)
		}
	}
	// Allocations that keep running under the new version without being
	// replaced: their spec did not change.
	if old := snap.Workload(wl.Namespace, wl.Name); old != nil {
		for _, a := range snap.AllocsByWorkload(wl.Namespace, wl.Name) {
			if a.DesiredStatus != api.DesiredRun || a.Terminal() {
				continue
			}
			for _, g := range wl.Groups {
				if g.Name == a.Group && a.Index < g.Replicas && !scheduler.NeedsReplacement(a.TaskGroup, g) {
					group(g.Name).InPlace++
				}
			}
		}
	}
	resp.Groups = resp.Groups[:0]
	for _, g := range wl.Groups {
		resp.Groups = append(resp.Groups, *groups[g.Name])
		delete(groups, g.Name)
	}
	var rest []string
	for name := range groups {
		rest = append(rest, name)
	}
	slices.Sort(rest)
	for _, name := range rest {
		resp.Groups = append(resp.Groups, *groups[name])
	}
	resp.Groups = slices.Clip(resp.Groups)
}

// diffWorkloads lists the fields that differ between the stored version
// and the planned one, by their JSON names: the workload's own fields,
// then each group's, marked destructive when they replace allocations.
func diffWorkloads(old, cur *api.Workload) []api.DiffEntry {
	out := []api.DiffEntry{}
	if old == nil {
		return append(out, api.DiffEntry{Path: "workload", New: cur.Name + " (new)"})
	}
	oc, cc := *old, *cur
	oc.Groups, cc.Groups = nil, nil
	for _, k := range []*api.Workload{&oc, &cc} {
		k.Version, k.SubmitTime, k.CreateIndex, k.ModifyIndex, k.Unenforced = 0, cc.SubmitTime, 0, 0, nil
	}
	out = append(out, diffFields("", &oc, &cc, func(string) bool { return false })...)
	if old.Stopped {
		out = append(out, api.DiffEntry{Path: "stopped", Old: "true", New: "false"})
	}
	for _, g := range cur.Groups {
		var before *api.TaskGroup
		for _, og := range old.Groups {
			if og.Name == g.Name {
				before = og
			}
		}
		path := "groups." + g.Name
		if before == nil {
			out = append(out, api.DiffEntry{Path: path, New: "(new group)"})
			continue
		}
		destructive := scheduler.NeedsReplacement(before, g)
		out = append(out, diffFields(path+".", secretsShown(before, nil), secretsShown(g, before), func(field string) bool {
			return destructive && field != "replicas" && field != "update" && field != "disruption" && field != "shutdownDelay"
		})...)
	}
	for _, og := range old.Groups {
		if !slices.ContainsFunc(cur.Groups, func(g *api.TaskGroup) bool { return g.Name == og.Name }) {
			out = append(out, api.DiffEntry{Path: "groups." + og.Name, Old: "(removed)", Destructive: true})
		}
	}
	return out
}

// secretsShown is g as a diff may show it: each secret's value and
// ciphertext replaced by a mark, "(changed)" where its sealed value
// differs from the same secret's in old (nil: the stored version itself),
// so that a diff says a secret changed and never what it holds.
func secretsShown(g, old *api.TaskGroup) *api.TaskGroup {
	shown, _ := g.MapSecrets(func(t *api.Task, sec *api.Secret) error {
		mark := "(secret)"
		if old != nil {
			if prev := findSecretIn(old, t.Name, sec.Name); prev == nil || prev.Sealed != sec.Sealed {
				mark = "(changed)"
			}
		}
		sec.Value, sec.Sealed = mark, ""
		return nil
	})
	return shown
}

// diffFields compares two values field by field through their JSON form.
func diffFields(prefix string, a, b any, destructive func(field string) bool) []api.DiffEntry {
	var ma, mb map[string]json.RawMessage
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	_ = json.Unmarshal(ja, &ma)
	_ = json.Unmarshal(jb, &mb)
	var keys []string
	for k := range ma {
		keys = append(keys, k)
	}
	for k := range mb {
		if _, ok := ma[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var out []api.DiffEntry
	for _, k := range keys {
		if string(ma[k]) == string(mb[k]) {
			continue
		}
		out = append(out, api.DiffEntry{Path: prefix + k, Old: clip(string(ma[k])), New: clip(string(mb[k])), Destructive: destructive(k)})
	}
	return out
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

var (
	_ scheduler.DeploymentReader = (*state.Snapshot)(nil)
	_ scheduler.DeploymentReader = (*plannedState)(nil)
)
