package fsm

import (
	"fmt"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/state"
)

// AllocClientUpdate carries agents' reports and the evaluations they cause.
type AllocClientUpdate struct {
	Updates []*api.AllocUpdate `json:"updates"`
	Evals   []*api.Evaluation  `json:"evals,omitempty"`
	Time    time.Time          `json:"time"` // stamped by the proposer, for events
}

func applyAllocClientUpdate(w *state.WriteTxn, c *AllocClientUpdate) error {
	for _, u := range c.Updates {
		if err := w.UpdateAllocFromClientAt(u, c.Time); err != nil {
			return err
		}
		if err := w.CollectIfOrphan(u.ID); err != nil { // a purged workload's, now done
			return err
		}
	}
	return upsertEvals(w, c.Evals)
}

// allocClientUpdateEffects: an allocation that finished frees capacity.
func allocClientUpdateEffects(c *AllocClientUpdate) Effects {
	e := evals(c.Evals...)
	for _, u := range c.Updates {
		switch u.ClientStatus {
		case api.AllocComplete, api.AllocFailed, api.AllocLost:
			e.Unblock = true
		}
	}
	return e
}

func allocClientUpdateEvents(snap *state.Snapshot, c *AllocClientUpdate) []api.Event {
	var out []api.Event
	for _, u := range c.Updates {
		old := snap.Alloc(u.ID)
		if old != nil && old.ClientStatus != api.AllocLost {
			for _, e := range healthEvents(old, u) {
				e.Time = c.Time
				out = append(out, e)
			}
		}
		if old == nil || u.ClientStatus != api.AllocFailed || old.ClientStatus == api.AllocFailed {
			continue
		}
		out = append(out, api.Event{Time: c.Time, Type: api.EventAllocFailed, Namespace: old.Namespace, Workload: old.Workload, NodeID: old.NodeID,
			AllocID: old.ID, Message: fmt.Sprintf("%s[%d] on %s failed: %s", old.Group, old.Index, old.NodeName, u.ClientReason)})
	}
	return out
}

// healthEvents are the events of an agent's report about one allocation:
// its health changing to healthy or unhealthy, and each check whose
// status changed, with its last output.
func healthEvents(old *api.Allocation, u *api.AllocUpdate) []api.Event {
	if u.Health == nil {
		return nil
	}
	var out []api.Event
	where := fmt.Sprintf("%s[%d] on %s", old.Group, old.Index, old.NodeName)
	ev := func(typ, msg string) api.Event {
		return api.Event{Type: typ, Namespace: api.NamespaceOf(old.Namespace), Workload: old.Workload, NodeID: old.NodeID, AllocID: old.ID, Message: msg}
	}
	before := map[string]string{}
	if old.Health != nil {
		for _, c := range old.Health.Checks {
			before[c.Task+"/"+c.Service+"/"+c.Name] = c.Status
		}
	}
	for _, c := range u.Health.Checks {
		prev, known := before[c.Task+"/"+c.Service+"/"+c.Name]
		if c.Status == api.CheckPending || (known && prev == c.Status) {
			continue
		}
		owner := "task " + c.Task
		if c.Task == "" {
			owner = "service " + c.Service
		}
		out = append(out, ev(api.EventCheck, fmt.Sprintf("%s: %s check %s of %s is %s: %s", where, c.Purpose, c.Name, owner, c.Status, c.Output)))
	}
	was := ""
	if old.Health != nil {
		was = old.Health.Status
	}
	if now := u.Health.Status; now != was && now != api.HealthPending {
		msg := where + " is " + now
		if u.Health.Reason != "" {
			msg += ": " + u.Health.Reason
		}
		out = append(out, ev(api.EventAllocHealth, msg))
	}
	return out
}
