package state

import (
	"fmt"

	"github.com/strata-dev/strata/api"
)

// Collected counts what CollectGarbage deleted.
type Collected struct {
	Allocs, Evals, Deployments int
}

// CollectGarbage deletes the named allocations, evaluations and
// deployments (internal/gc decided them before proposing), each only if
// it is still there and still finished when the command applies: an
// allocation terminal, an evaluation complete or failed, a deployment
// terminal and not its workload's newest. So a command applied late never
// deletes what the cell needs.
func (w *WriteTxn) CollectGarbage(allocs, evals, deployments []string) (Collected, error) {
	var c Collected
	snap := w.Snapshot()
	for _, id := range allocs {
		if a := snap.Alloc(id); a != nil && a.Terminal() {
			if err := w.deleteAlloc(a); err != nil {
				return c, err
			}
			c.Allocs++
		}
	}
	for _, id := range evals {
		if e := snap.Eval(id); e != nil && (e.Status == api.EvalComplete || e.Status == api.EvalFailed) {
			if err := w.deleteEval(e); err != nil {
				return c, err
			}
			c.Evals++
		}
	}
	for _, id := range deployments {
		d := snap.Deployment(id)
		if d == nil || !api.DeploymentTerminal(d.Status) {
			continue
		}
		if latest := snap.LatestDeployment(d.Namespace, d.Workload); latest != nil && latest.ID == d.ID {
			continue
		}
		w.touched[tableDeployments] = true
		if err := w.txn.Delete(tableDeployments, d); err != nil {
			return c, fmt.Errorf("delete deployment %q: %w", id, err)
		}
		c.Deployments++
	}
	return c, nil
}

func (w *WriteTxn) deleteEval(e *api.Evaluation) error {
	w.touched[tableEvals] = true
	if err := w.txn.Delete(tableEvals, e); err != nil {
		return fmt.Errorf("delete evaluation %q: %w", e.ID, err)
	}
	return nil
}

// collectWorkloadEvals deletes the finished evaluations of workload name
// in namespace ns, which was just purged; those still pending go once
// they finish (listings hide them then: CurrentEvals).
func (w *WriteTxn) collectWorkloadEvals(ns, name string) error {
	for _, e := range w.Snapshot().EvalsByWorkload(nil, ns, name) {
		if e.Status == api.EvalComplete || e.Status == api.EvalFailed {
			if err := w.deleteEval(e); err != nil {
				return err
			}
		}
	}
	return nil
}

// CurrentEvals drops from evals those no listing shows: of an earlier
// incarnation of a stored workload, or finished ones of a workload that
// is not stored (purged). A purged workload's evaluation that still runs
// stays listed until it finishes, as its allocations do while they stop.
func (s *Snapshot) CurrentEvals(evals []*api.Evaluation) []*api.Evaluation {
	out := evals[:0:0]
	for _, e := range evals {
		wl := s.Workload(e.Namespace, e.Workload)
		switch {
		case wl == nil && (e.Status == api.EvalComplete || e.Status == api.EvalFailed):
		case wl != nil && e.CreateIndex != 0 && e.CreateIndex < wl.CreateIndex:
		default:
			out = append(out, e)
		}
	}
	return out
}
