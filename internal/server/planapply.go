package server

import (
	"time"

	"context"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/planapply"
)

// planApplier is the single writer of placements (invariant 2). It takes
// plans one at a time, decides what may be committed against the newest
// state with the rules the bench and the simulator share
// (internal/planapply: Omega-style optimistic concurrency, fresh ids,
// gangs all-or-nothing, no eviction for an unplaced preemptor), and
// commits that in raft entries of a bounded size (planentry.go). Nodes that no longer fit are rejected; the worker
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
	// fn, when set, is a write other than a plan that must be serialized
	// with plans (a migration's commit moves an allocation); plan is nil.
	fn func() (any, error)
}

type planOutcome struct {
	res *api.PlanResult
	val any // fn's answer
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

// Do runs fn on the applier's goroutine, between plans, and returns its
// answer: a write that places an allocation outside a plan (a migration's
// commit) checks the node and commits as plans do, never beside one.
func (p *planApplier) Do(ctx context.Context, fn func() (any, error)) (any, error) {
	pp := &pendingPlan{ctx: ctx, fn: fn, result: make(chan planOutcome, 1)}
	select {
	case p.queue <- pp:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case out := <-pp.result:
		return out.val, out.err
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
			if pp.fn != nil {
				v, err := pp.fn()
				pp.result <- planOutcome{val: v, err: err}
				continue
			}
			start := time.Now()
			res, err := p.apply(pp)
			p.srv.metrics.observePlan(pp.plan, res, err, time.Since(start))
			pp.result <- planOutcome{res: res, err: err}
		}
	}
}

func (p *planApplier) apply(pp *pendingPlan) (*api.PlanResult, error) {
	snap := p.srv.State().Snapshot()
	plan := pp.plan
	cmd := &applyPlanCmd{Time: p.srv.cfg.Now()}
	d := planapply.Decide(snap, plan)
	res := &api.PlanResult{Committed: d.Committed, Rejected: d.Rejected, RejectReasons: d.Reasons}
	cmd.Place, cmd.Stop = d.Place, d.Stop
	// A preempted allocation's workload is re-evaluated so it gets a
	// replacement when capacity allows (blocked until then).
	victims := map[workloadKey]bool{}
	own := workloadKey{api.NamespaceOf(plan.Namespace), plan.Workload}
	for _, a := range d.Preempted {
		if k := keyOfAlloc(a); k != own && !victims[k] {
			victims[k] = true
			cmd.Evals = append(cmd.Evals, p.srv.newEval(a.Namespace, a.Workload, a.Priority, api.TriggerPreemption, ""))
		}
	}
	if len(res.Rejected) == 0 {
		cmd.Eval = pp.eval
		cmd.Evals = append(cmd.Evals, plan.FollowUps...) // decided by the scheduler, before proposing
		cmd.Deployment = plan.Deployment
		cmd.InPlace = plan.InPlace
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
