package fsm

import (
	"errors"
	"fmt"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/state"
)

// UpsertWorkload registers or updates a workload and its evaluation.
type UpsertWorkload struct {
	Workload *api.Workload   `json:"workload"`
	Eval     *api.Evaluation `json:"eval"`
	// Deployment, when set, starts the deployment of this version (a
	// destructive update of a running workload).
	Deployment *api.Deployment `json:"deployment,omitempty"`
	// CheckIndex, when set, applies the command only if the stored
	// workload's ModifyIndex is still this (0: no workload of that name);
	// otherwise nothing is written (strata run --check-index).
	CheckIndex *uint64 `json:"checkIndex,omitempty"`
	// Limits, when set, are the bounds the registration is held to
	// (state.CheckWorkloadLimits), resolved by the leader: nothing is
	// written past one. Entries from before bounds carry none.
	Limits *state.WorkloadLimits `json:"limits,omitempty"`
}

// StopWorkload marks a workload stopped, or purges it.
type StopWorkload struct {
	Namespace string          `json:"namespace,omitempty"` // "": the default namespace (entries from before namespaces)
	Name      string          `json:"name"`
	Purge     bool            `json:"purge"`
	Eval      *api.Evaluation `json:"eval"`
	Time      time.Time       `json:"time"` // stamped by the proposer, for events
}

// Registered is the FSM's answer to an UpsertWorkload: the version it
// gave the workload, in log order. The proposer reads it from the answer;
// reading the store after the entry applied could already show a later
// submission's version.
type Registered struct{ Version uint64 }

// Stopped is the FSM's answer to a StopWorkload: whether the workload
// existed when the entry applied. The API answers 404 from it, not from
// its own state before proposing: two concurrent purges would both have
// found the workload there, and a deposed leader that did not know it yet
// could answer 404 from its old state.
type Stopped struct{ Found bool }

// ErrWorkloadChanged refuses a registration whose check index is stale.
var ErrWorkloadChanged = errors.New("the workload changed since the plan")

func applyUpsertWorkload(w *state.WriteTxn, c *UpsertWorkload) (any, error) {
	if err := checkWorkloadIndex(w.Snapshot(), c); err != nil {
		return nil, err
	}
	if c.Limits != nil {
		if err := w.Snapshot().CheckWorkloadLimits(c.Workload, *c.Limits); err != nil {
			return nil, err
		}
	}
	if err := w.RegisterWorkload(c.Workload, c.Deployment, c.Workload.SubmitTime); err != nil {
		return nil, err
	}
	return Registered{Version: c.Workload.Version}, w.UpsertEval(c.Eval)
}

// checkWorkloadIndex applies UpsertWorkload.CheckIndex.
func checkWorkloadIndex(snap *state.Snapshot, c *UpsertWorkload) error {
	if c.CheckIndex == nil {
		return nil
	}
	var cur uint64
	if old := snap.Workload(c.Workload.Namespace, c.Workload.Name); old != nil {
		cur = old.ModifyIndex
	}
	if cur != *c.CheckIndex {
		return fmt.Errorf("%w: check index %d, workload %s is at %d", ErrWorkloadChanged, *c.CheckIndex, c.Workload.Name, cur)
	}
	return nil
}

func upsertWorkloadEvents(snap *state.Snapshot, c *UpsertWorkload) []api.Event {
	version := state.NextWorkloadVersion(snap.Workload(c.Workload.Namespace, c.Workload.Name))
	out := []api.Event{{Time: c.Workload.SubmitTime, Type: api.EventWorkloadRegistered, Namespace: api.NamespaceOf(c.Workload.Namespace),
		Workload: c.Workload.Name, Message: fmt.Sprintf("version %d submitted", version)}}
	if d := c.Deployment; d != nil {
		out = append(out, deploymentEvent(c.Workload.SubmitTime, d, "deployment %s started: version %d replaces version %d",
			ShortID(d.ID), state.NextWorkloadVersion(snap.Workload(c.Workload.Namespace, d.Workload)), d.FromVersion))
	}
	return out
}

func applyStopWorkload(w *state.WriteTxn, c *StopWorkload) (any, error) {
	found := w.Snapshot().Workload(c.Namespace, c.Name) != nil
	if c.Purge {
		if err := w.DeleteWorkload(c.Namespace, c.Name); err != nil && !errors.Is(err, state.ErrNotFound) {
			return nil, err
		}
	} else if err := w.StopWorkload(c.Namespace, c.Name); err != nil && !errors.Is(err, state.ErrNotFound) {
		return nil, err
	} else if err := w.CancelDeployment(c.Namespace, c.Name, "workload stopped", c.Time); err != nil {
		return nil, err
	}
	return Stopped{Found: found}, w.UpsertEval(c.Eval)
}

func stopWorkloadEvents(_ *state.Snapshot, c *StopWorkload) []api.Event {
	t, msg := api.EventWorkloadStopped, "stopped"
	if c.Purge {
		t, msg = api.EventWorkloadPurged, "stopped and purged"
	}
	return []api.Event{{Time: c.Time, Type: t, Namespace: api.NamespaceOf(c.Namespace), Workload: c.Name, Message: msg}}
}
