package leader

import (
	"context"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/fsm"
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
	l     *Leader
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

func newPlanApplier(l *Leader) *planApplier {
	return &planApplier{l: l, queue: make(chan *pendingPlan, 64)}
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
			pp.result <- p.serve(pp)
		}
	}
}

// serve applies one queued plan (or runs one queued write). A panic fails
// that one, as a panicError its worker records on the evaluation; the
// applier goes on with the next.
func (p *planApplier) serve(pp *pendingPlan) (out planOutcome) {
	defer func() {
		if v := recover(); v != nil {
			out = planOutcome{err: &panicError{value: fmt.Sprint(v), stack: debug.Stack()}}
		}
	}()
	if pp.fn != nil {
		v, err := pp.fn()
		return planOutcome{val: v, err: err}
	}
	start := time.Now()
	res, err := p.apply(pp)
	p.l.metrics.observePlan(pp.plan, res, err, time.Since(start))
	if err == nil {
		p.l.anomalies.observeCommit(time.Since(start))
	}
	return planOutcome{res: res, err: err}
}

func (p *planApplier) apply(pp *pendingPlan) (*api.PlanResult, error) {
	snap := p.l.state().Snapshot()
	plan := pp.plan
	cmd := &fsm.ApplyPlan{Time: p.l.cfg.Now()}
	d := planapply.Decide(snap, plan)
	res := &api.PlanResult{Committed: d.Committed, Rejected: d.Rejected, RejectReasons: d.Reasons}
	cmd.Place, cmd.Stop = d.Place, d.Stop
	// A preempted allocation's workload is re-evaluated so it gets a
	// replacement when capacity allows (blocked until then).
	cmd.Evals = p.l.make.Preempted(plan.Namespace, plan.Workload, d.Preempted)
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
	parts, err := fsm.PlanParts(cmd, fsm.MaxPlanPartBytes, func(id string) fsm.StoppedAlloc {
		a := snap.Alloc(id)
		if a == nil {
			return fsm.StoppedAlloc{}
		}
		return fsm.StoppedAlloc{Workload: a.Workload, Node: a.NodeID, Gang: fsm.GangKey(a.Workload, a.TaskGroup)}
	})
	if err != nil {
		return nil, err
	}
	idx, err := p.l.proposer.ProposePlan(parts)
	if err != nil {
		return nil, err
	}
	res.Index = idx
	return res, nil
}
