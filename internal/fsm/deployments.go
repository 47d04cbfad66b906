package fsm

import (
	"fmt"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/state"
)

// Deployments (docs/deployments.md): the leader starts one with a
// destructive update of a running workload (in the UpsertWorkload entry),
// the scheduler moves it (in the plans it commits), users promote or fail
// it, and the leader reverts a failed one with autoRevert to the last
// stable version.

// PromoteDeployment promotes the canaries of Groups (all when empty).
type PromoteDeployment struct {
	ID     string          `json:"id"`
	Groups []string        `json:"groups,omitempty"`
	Eval   *api.Evaluation `json:"eval"`
	Time   time.Time       `json:"time"`
}

// FailDeployment fails a deployment and, with Revert, registers the last
// stable version again in the same entry.
type FailDeployment struct {
	ID     string          `json:"id"`
	Reason string          `json:"reason"`
	Revert *UpsertWorkload `json:"revert,omitempty"`
	Eval   *api.Evaluation `json:"eval,omitempty"`
	Time   time.Time       `json:"time"`
}

func applyPromoteDeployment(w *state.WriteTxn, c *PromoteDeployment) error {
	if err := w.PromoteDeployment(c.ID, c.Groups, c.Time); err != nil {
		return err
	}
	return upsertEvals(w, []*api.Evaluation{c.Eval})
}

func promoteDeploymentEvents(snap *state.Snapshot, c *PromoteDeployment) []api.Event {
	if cur := snap.Deployment(c.ID); cur != nil {
		return []api.Event{deploymentEvent(c.Time, cur, "deployment %s promoted", ShortID(c.ID))}
	}
	return nil
}

func applyFailDeployment(w *state.WriteTxn, c *FailDeployment) error {
	if err := w.FailDeployment(c.ID, c.Reason, 0, c.Time); err != nil {
		return err
	}
	if c.Revert != nil {
		if err := w.RegisterWorkload(c.Revert.Workload, c.Revert.Deployment, c.Revert.Workload.SubmitTime); err != nil {
			return err
		}
		if err := w.FailDeployment(c.ID, c.Reason, c.Revert.Workload.Version, c.Time); err != nil {
			return err
		}
		if err := w.UpsertEval(c.Revert.Eval); err != nil {
			return err
		}
	}
	if c.Eval != nil {
		return w.UpsertEval(c.Eval)
	}
	return nil
}

func failDeploymentEvents(snap *state.Snapshot, c *FailDeployment) []api.Event {
	if cur := snap.Deployment(c.ID); cur != nil {
		return []api.Event{deploymentEvent(c.Time, cur, "deployment %s failed: %s", ShortID(c.ID), c.Reason)}
	}
	return nil
}

// failDeploymentEffects: the deployment's evaluation, then the revert's.
func failDeploymentEffects(c *FailDeployment) Effects {
	e := evals(c.Eval)
	if c.Revert != nil {
		e.Evals = append(e.Evals, evals(c.Revert.Eval).Evals...)
	}
	return e
}

// deploymentEvent is an event about deployment d.
func deploymentEvent(at time.Time, d *api.Deployment, format string, args ...any) api.Event {
	return api.Event{Time: at, Type: api.EventDeployment, Namespace: api.NamespaceOf(d.Namespace), Workload: d.Workload, Message: fmt.Sprintf(format, args...)}
}
