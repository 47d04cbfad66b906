package fsm

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/state"
)

// ApplyPlan is what the plan applier commits of one plan, as the FSM
// applies it. Old logs hold it whole (apply-plan); the plan applier now
// writes it in parts (apply-plan-part, planparts.go), each of which
// decodes into one ApplyPlan.
type ApplyPlan struct {
	Place []*api.Allocation `json:"place,omitempty"`
	Stop  []api.StopRequest `json:"stop,omitempty"`
	// Eval, when set, is the plan's evaluation with its final status.
	Eval *api.Evaluation `json:"eval,omitempty"`
	// Evals re-evaluate the workloads whose allocations this plan
	// preempted, and the follow-ups the scheduler asked for.
	Evals []*api.Evaluation `json:"evals,omitempty"`
	Time  time.Time         `json:"time"` // stamped by the proposer, for events
	// Deployment is the plan's word on its workload's deployment (with
	// the outcome, in the last part).
	Deployment *api.DeploymentProgress `json:"deployment,omitempty"`
	// InPlace moves allocations to a new version without a restart.
	InPlace []api.InPlaceUpdate `json:"inPlace,omitempty"`
	// Part and Parts number the entries of a plan written in parts
	// (1..Parts); zero in a plan written whole.
	Part  int `json:"-"`
	Parts int `json:"-"`
}

func applyPlan(w *state.WriteTxn, c *ApplyPlan) error {
	w.ShareGroups(c.Place)
	for _, s := range c.Stop {
		if err := w.StopAllocRequest(s); err != nil && !errors.Is(err, state.ErrNotFound) {
			return err
		}
		if err := w.CollectIfOrphan(s.AllocID); err != nil { // a purged workload's, now stopped
			return err
		}
	}
	for _, a := range c.Place {
		if err := w.UpsertAlloc(a); err != nil {
			return err
		}
	}
	if c.Eval != nil {
		if err := w.UpsertEval(c.Eval); err != nil {
			return err
		}
	}
	if c.Deployment != nil {
		if err := w.ApplyDeploymentProgress(c.Deployment, c.Time); err != nil {
			return err
		}
	}
	for _, u := range c.InPlace {
		if err := w.UpdateAllocInPlace(u); err != nil {
			return err
		}
	}
	return upsertEvals(w, c.Evals)
}

// planEffects: evaluations the plan stored; stopped allocations free
// capacity; a failed deployment may want its revert.
func planEffects(c *ApplyPlan) Effects {
	e := evals(c.Evals...)
	e.DeploymentFailed = c.Deployment != nil && c.Deployment.Status == api.DeploymentFailed
	e.Unblock = len(c.Stop) > 0
	return e
}

// planEvents summarizes a plan per workload (placements in bulk, stops in
// bulk) and lists every preemption on its own: those are rare and matter.
func planEvents(snap *state.Snapshot, c *ApplyPlan) []api.Event {
	var out []api.Event
	placed := map[string]int{}
	nodes := map[string]map[string]bool{}
	for _, a := range c.Place {
		k := Qualified(a.Namespace, a.Workload)
		placed[k]++
		if nodes[k] == nil {
			nodes[k] = map[string]bool{}
		}
		nodes[k][a.NodeID] = true
	}
	part := ""
	if c.Parts > 1 {
		part = fmt.Sprintf(" (plan part %d of %d)", c.Part, c.Parts)
	}
	for _, k := range sortedKeys(placed) {
		ns, w := unqualified(k)
		out = append(out, api.Event{Time: c.Time, Type: api.EventPlaced, Namespace: ns, Workload: w,
			Message: fmt.Sprintf("placed %d allocation(s) on %d node(s)%s", placed[k], len(nodes[k]), part)})
	}
	stopped := map[string]int{}
	for _, st := range c.Stop {
		a := snap.Alloc(st.AllocID)
		if a == nil {
			continue
		}
		if st.PreemptedBy != "" {
			out = append(out, api.Event{Time: c.Time, Type: api.EventPreempted, Namespace: a.Namespace, Workload: a.Workload, NodeID: a.NodeID, AllocID: a.ID,
				Message: fmt.Sprintf("%s[%d] (priority %d) on %s %s", a.Group, a.Index, a.Priority, a.NodeName, st.Reason)})
			continue
		}
		if a.ClientStatus == api.AllocFailed {
			out = append(out, api.Event{Time: c.Time, Type: api.EventNotRescheduled, Namespace: a.Namespace, Workload: a.Workload, NodeID: a.NodeID, AllocID: a.ID,
				Message: fmt.Sprintf("%s[%d] on %s failed and is not replaced: %s", a.Group, a.Index, a.NodeName, st.Reason)})
			continue
		}
		stopped[Qualified(a.Namespace, a.Workload)+"\x00"+st.Reason]++
	}
	for _, e := range c.Evals {
		if e.TriggeredBy == api.TriggerFollowUp && !e.WaitUntil.IsZero() {
			out = append(out, api.Event{Time: c.Time, Type: api.EventFollowUp, Namespace: e.Namespace, Workload: e.Workload,
				Message: fmt.Sprintf("evaluating again at %s (%s from now): a delayed replacement or the end of an unknown allocation's grace",
					e.WaitUntil.UTC().Format(time.RFC3339), e.WaitUntil.Sub(c.Time).Round(time.Millisecond))})
		}
	}
	for _, k := range sortedKeys(stopped) {
		q, reason, _ := strings.Cut(k, "\x00")
		ns, w := unqualified(q)
		out = append(out, api.Event{Time: c.Time, Type: api.EventStopped, Namespace: ns, Workload: w,
			Message: fmt.Sprintf("stopping %d allocation(s): %s%s", stopped[k], reason, part)})
	}
	if e := c.Eval; e != nil && e.Status == api.EvalBlocked {
		for _, f := range e.Failures {
			out = append(out, api.Event{Time: c.Time, Type: api.EventUnplaceable, Namespace: e.Namespace, Workload: e.Workload,
				Message: fmt.Sprintf("group %s: %d not placed: %s", f.Group, f.Missing, f.Summary)})
		}
	}
	if p := c.Deployment; p != nil {
		if cur := snap.Deployment(p.ID); cur != nil && !api.DeploymentTerminal(cur.Status) && cur.Status != p.Status {
			msg := fmt.Sprintf("deployment %s %s", ShortID(p.ID), p.Status)
			if p.StatusDescription != "" {
				msg += ": " + p.StatusDescription
			}
			out = append(out, deploymentEvent(c.Time, cur, "%s", msg))
		}
	}
	return out
}
