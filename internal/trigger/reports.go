package trigger

import (
	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/disruption"
	"github.com/strata-dev/strata/internal/fsm"
	"github.com/strata-dev/strata/internal/state"
)

// Reports builds the command that records an agent's reports (each of an
// allocation of its own node), with at most one evaluation per workload,
// for the first reason among:
//
//   - an allocation newly failed: its replacement (alloc-failed);
//   - an allocation of a workload under an unfinished deployment changed
//     status: the deployment moves on (deployment);
//   - an allocation started serving that replaces one still running, or
//     whose workload has allocations left on a draining node (draining
//     says which): a move may go on (node-drain).
//
// A report of an allocation the state does not know is dropped; one that
// would move an allocation's status backwards is refused, with why. The
// command is nil when nothing is left to record.
func (m *Maker) Reports(snap *state.Snapshot, updates []*api.AllocUpdate, draining func(workload string) bool) (*fsm.AllocClientUpdate, []api.RefusedUpdate) {
	cmd := &fsm.AllocClientUpdate{Time: m.Now()}
	evaluated := map[workloadKey]bool{}
	var refused []api.RefusedUpdate
	for _, u := range updates {
		old := snap.Alloc(u.ID)
		if old == nil {
			continue
		}
		if why := state.IllegalClientTransition(old.ClientStatus, u.ClientStatus); why != "" {
			refused = append(refused, api.RefusedUpdate{ID: u.ID, Reason: why})
			continue
		}
		cmd.Updates = append(cmd.Updates, u)
		if evaluated[keyOf(old)] {
			continue
		}
		var why string
		switch {
		case u.ClientStatus == api.AllocFailed && old.ClientStatus != api.AllocFailed && old.DesiredStatus == api.DesiredRun:
			why = api.TriggerAllocFailed
		case deploymentMoves(snap, old, u):
			why = api.TriggerDeployment
		case movesOn(snap, old, u, draining):
			why = api.TriggerNodeDrain
		default:
			continue
		}
		evaluated[keyOf(old)] = true
		cmd.Evals = append(cmd.Evals, m.Eval(old.Namespace, old.Workload, old.Priority, why, old.NodeID))
	}
	if len(cmd.Updates) == 0 {
		return nil, refused
	}
	return cmd, refused
}

// deploymentMoves reports whether an agent's report moves a deployment:
// an allocation of a workload under an unfinished deployment starts
// running (its minHealthyTime begins; the scheduler then asks to look
// again when it is up) or fails.
func deploymentMoves(snap *state.Snapshot, old *api.Allocation, u *api.AllocUpdate) bool {
	if old.DesiredStatus != api.DesiredRun || u.ClientStatus == old.ClientStatus {
		return false
	}
	d := snap.LatestDeployment(old.Namespace, old.Workload)
	return d != nil && !api.DeploymentTerminal(d.Status)
}

// movesOn reports whether an agent's report that old now serves (runs,
// and is ready where its agent reports health: disruption.Serving) may let
// a move go on: old replaces an allocation that still runs (its
// predecessor can stop now), or its workload has allocations left on a
// draining node (a replica up frees disruption budget).
func movesOn(snap *state.Snapshot, old *api.Allocation, u *api.AllocUpdate, draining func(workload string) bool) bool {
	after := *old
	after.ClientStatus, after.Health = u.ClientStatus, u.Health
	if disruption.Serving(old) || !disruption.Serving(&after) {
		return false
	}
	if prev := snap.Alloc(old.PreviousAlloc); prev != nil && prev.DesiredStatus == api.DesiredRun && !prev.Terminal() {
		return true
	}
	return draining != nil && draining(fsm.Qualified(old.Namespace, old.Workload))
}
