package server

import (
	"time"

	"context"
	"fmt"
	"sort"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/scheduler"
	"github.com/strata-dev/strata/internal/state"
)

// planApplier is the single writer of placements (invariant 2). It takes
// plans one at a time, re-checks each node's part against the newest state
// (Omega-style optimistic concurrency), and commits the nodes that still fit
// in raft entries of a bounded size (planentry.go). Nodes that no longer fit are rejected; the worker
// retries them on a fresher snapshot.
type planApplier struct {
	srv   *Server
	queue chan *pendingPlan
}

type pendingPlan struct {
	ctx    context.Context // the submitter's; a plan whose worker gave up is dropped
	plan   *api.Plan
	eval   *api.Evaluation // the evaluation's outcome, committed with a full plan
	result chan planOutcome
}

type planOutcome struct {
	res *api.PlanResult
	err error
}

func newPlanApplier(s *Server) *planApplier {
	return &planApplier{srv: s, queue: make(chan *pendingPlan, 64)}
}

// Submit queues a plan and waits for its result.
func (p *planApplier) Submit(ctx context.Context, plan *api.Plan, eval *api.Evaluation) (*api.PlanResult, error) {
	pp := &pendingPlan{ctx: ctx, plan: plan, eval: eval, result: make(chan planOutcome, 1)}
	select {
	case p.queue <- pp:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case out := <-pp.result:
		return out.res, out.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (p *planApplier) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case pp := <-p.queue:
			if pp.ctx.Err() != nil {
				continue // e.g. queued in a previous leadership term
			}
			start := time.Now()
			res, err := p.apply(pp)
			p.srv.metrics.observePlan(res, err, time.Since(start))
			pp.result <- planOutcome{res: res, err: err}
		}
	}
}

func (p *planApplier) apply(pp *pendingPlan) (*api.PlanResult, error) {
	snap := p.srv.State().Snapshot()
	plan := pp.plan
	res := &api.PlanResult{}
	cmd := &applyPlanCmd{Time: p.srv.cfg.Now()}

	ids := map[string]bool{} // placements' ids seen so far in this plan
	nodes := make([]string, 0, len(plan.Place))
	for id := range plan.Place {
		nodes = append(nodes, id)
	}
	sort.Strings(nodes)
	for _, id := range nodes {
		stopping := map[string]bool{}
		for _, s := range plan.Stop[id] {
			stopping[s.AllocID] = true
		}
		ok, reason := scheduler.CheckNode(snap.Node(id), snap.AllocsByNode(id), stopping, plan.Place[id])
		if ok {
			ok, reason = freshIDs(snap, plan.Place[id], ids)
		}
		if !ok {
			res.Rejected = append(res.Rejected, id)
			res.RejectReasons = append(res.RejectReasons, fmt.Sprintf("%s: %s", id, reason))
			continue
		}
		res.Committed = append(res.Committed, id)
	}
	if len(res.Rejected) > 0 && hasGang(plan) {
		// A gang is all-or-nothing (invariant 4): if any node of the plan
		// no longer fits, commit no placement of it; the worker retries.
		res.Rejected = append(res.Rejected, res.Committed...)
		res.Committed = nil
		sort.Strings(res.Rejected)
	}
	// Placements that will not be committed: their victims (on any node —
	// evicting one member of a gang evicts the whole gang) stay.
	unplaced := map[string]bool{}
	for _, id := range res.Rejected {
		for _, a := range plan.Place[id] {
			unplaced[a.ID] = true
		}
	}
	for _, id := range res.Committed {
		cmd.Place = append(cmd.Place, plan.Place[id]...)
	}
	// Stops never overcommit anything: commit them in a stable order, except
	// evictions whose preemptor is not placed.
	stopNodes := make([]string, 0, len(plan.Stop))
	for id := range plan.Stop {
		stopNodes = append(stopNodes, id)
	}
	sort.Strings(stopNodes)
	victims := map[string]bool{}
	for _, id := range stopNodes {
		for _, st := range plan.Stop[id] {
			if st.PreemptedBy != "" && unplaced[st.PreemptedBy] {
				continue // its preemptor is not placed: nobody is evicted for nothing
			}
			cmd.Stop = append(cmd.Stop, st)
			if st.PreemptedBy == "" {
				continue
			}
			// A preempted allocation's workload is re-evaluated so it gets
			// a replacement when capacity allows (blocked until then).
			if a := snap.Alloc(st.AllocID); a != nil && a.Workload != plan.Workload && !victims[a.Workload] {
				victims[a.Workload] = true
				cmd.Evals = append(cmd.Evals, p.srv.newEval(a.Workload, a.Priority, api.TriggerPreemption, ""))
			}
		}
	}
	if len(res.Rejected) == 0 {
		cmd.Eval = pp.eval
	}
	if len(cmd.Place) == 0 && len(cmd.Stop) == 0 && cmd.Eval == nil {
		res.Index = snap.Index()
		return res, nil
	}
	parts, err := planParts(cmd, maxPlanPartBytes, func(id string) stoppedAlloc {
		a := snap.Alloc(id)
		if a == nil {
			return stoppedAlloc{}
		}
		return stoppedAlloc{Workload: a.Workload, Node: a.NodeID, Gang: gangKey(a.Workload, a.TaskGroup)}
	})
	if err != nil {
		return nil, err
	}
	idx, _, err := p.srv.proposeEncoded(cmdApplyPlanPart, parts...)
	if err != nil {
		return nil, err
	}
	res.Index = idx
	return res, nil
}

// freshIDs reports whether every placement has an id that no allocation
// ever had (the store keeps allocations until they are collected) and that
// no other placement of the plan uses. Ids are never reused (invariant 8):
// an upsert under a live allocation's id would silently replace it.
func freshIDs(snap *state.Snapshot, place []*api.Allocation, seen map[string]bool) (bool, string) {
	for _, a := range place {
		if snap.Alloc(a.ID) != nil || seen[a.ID] {
			return false, fmt.Sprintf("allocation id %s already exists", a.ID)
		}
		seen[a.ID] = true
	}
	return true, ""
}

// hasGang reports whether any placement of the plan belongs to a gang group.
func hasGang(plan *api.Plan) bool {
	for _, allocs := range plan.Place {
		for _, a := range allocs {
			if a.TaskGroup != nil && a.TaskGroup.Gang != nil {
				return true
			}
		}
	}
	return false
}
