package httpapi

import (
	"errors"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/fsm"
	"github.com/strata-dev/strata/internal/httpapi/route"
	"github.com/strata-dev/strata/internal/state"
)

// Bounds on what the cell holds (docs/limits.md): a registration — a
// submission or a revert — is held to the cell's bounds on workloads and
// on the replicas of running workloads, and to its namespace's (the
// namespace's quota, else the cell's bounds for namespaces). They are
// resolved here, from the cell's configuration and the namespace as the
// state has them, checked at once for an answer that names the field, and
// stamped on the entry, where the FSM checks them again in log order
// (state.CheckWorkloadLimits): a burst of concurrent submissions cannot
// slip past a bound, and a server never stores what it would not accept.

// workloadLimits are the bounds of a registration in namespace ns.
func workloadLimits(snap *state.Snapshot, ns string) state.WorkloadLimits {
	cell := snap.CellConfig().Limits.Effective()
	l := state.WorkloadLimits{CellWorkloads: cell.Workloads, CellReplicas: cell.Replicas,
		NamespaceWorkloads: cell.NamespaceWorkloads, NamespaceReplicas: cell.NamespaceReplicas}
	if q := snap.NamespaceQuota(ns); q != nil {
		if q.Workloads != nil {
			l.NamespaceWorkloads = max(*q.Workloads, 0)
			if l.NamespaceWorkloads == 0 {
				l.NamespaceWorkloads = -1 // a quota of none: no workload at all
			}
		}
		if q.Replicas != nil {
			l.NamespaceReplicas = max(*q.Replicas, 0)
			if l.NamespaceReplicas == 0 {
				l.NamespaceReplicas = -1
			}
		}
	}
	return l
}

// withinLimits stamps cmd with the bounds of its namespace and checks
// them against snap.
func withinLimits(snap *state.Snapshot, cmd *fsm.UpsertWorkload) error {
	l := workloadLimits(snap, api.NamespaceOf(cmd.Workload.Namespace))
	cmd.Limits = &l
	return limitError(snap.CheckWorkloadLimits(cmd.Workload, l))
}

// limitError is the answer to a registration past a bound (from the
// check here or the FSM's), a 400 naming the field; other errors pass.
func limitError(err error) error {
	var le *state.LimitError
	if errors.As(err, &le) {
		return route.FieldError("limit-exceeded", le.Field, "%s", le.Msg)
	}
	return err
}
