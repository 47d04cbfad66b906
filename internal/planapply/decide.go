package planapply

import (
	"maps"
	"slices"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/scheduler"
)

// View is what the rules read of the newest state.
type View interface {
	Node(id string) *api.Node // nil when unknown
	// Workload and AllocsByWorkload are what the victims' disruption
	// budgets are counted from (budget.go).
	scheduler.Workloads
	// AllocsByNode is the node's allocations, any status.
	AllocsByNode(id string) []*api.Allocation
	// Alloc is the allocation with id, any status, as long as the state
	// keeps it; nil otherwise.
	Alloc(id string) *api.Allocation
}

// Decision is what may be committed of a plan.
type Decision struct {
	// Committed and Rejected are node ids of the plan's placements, each
	// sorted; together they are every node the plan places on.
	Committed, Rejected []string
	// Reasons says why each node rejected on its own merits was, as
	// "node: reason", in node order. Nodes rejected only because a gang
	// is all-or-nothing have none.
	Reasons []string
	// Place is the placements of the committed nodes, in node order.
	Place []*api.Allocation
	// Stop is the stops to commit, in node order, without the evictions
	// whose preemptor is not committed.
	Stop []api.StopRequest
	// Preempted is, for each stop of Stop that is an eviction, the evicted
	// allocation as the view holds it (when it still does), in Stop's
	// order.
	Preempted []*api.Allocation
}

// Full reports whether the whole plan may be committed.
func (d *Decision) Full() bool { return len(d.Rejected) == 0 }

// Decide applies the plan applier's rules to plan against v.
func Decide(v View, plan *api.Plan) Decision {
	var d Decision
	placements := 0
	for _, place := range plan.Place {
		placements += len(place)
	}
	seen := make(map[string]struct{}, placements) // placements' ids so far in this plan
	for _, id := range slices.Sorted(maps.Keys(plan.Place)) {
		var stopping map[string]bool
		if stops := plan.Stop[id]; len(stops) > 0 {
			stopping = make(map[string]bool, len(stops))
			for _, s := range stops {
				stopping[s.AllocID] = true
			}
		}
		ok, reason := scheduler.CheckNode(v.Node(id), v.AllocsByNode(id), stopping, plan.Place[id])
		if ok {
			ok, reason = freshIDs(v, plan.Place[id], seen)
		}
		if !ok {
			d.Rejected = append(d.Rejected, id)
			d.Reasons = append(d.Reasons, id+": "+reason)
			continue
		}
		d.Committed = append(d.Committed, id)
	}
	if why := overQuota(v, plan, d.Committed); why != "" {
		// The namespace's quota holds for the plan as a whole: commit no
		// placement of it (the worker retries on the newest state, where
		// its group waits for the quota with the reason).
		for _, id := range d.Committed {
			d.Rejected = append(d.Rejected, id)
			d.Reasons = append(d.Reasons, id+": "+why)
		}
		d.Committed = nil
		slices.Sort(d.Rejected)
	}
	if keep, rejected, reasons := overBudget(v, plan, d.Committed); len(rejected) > 0 {
		d.Committed = keep
		d.Rejected = append(d.Rejected, rejected...)
		d.Reasons = append(d.Reasons, reasons...)
		slices.Sort(d.Rejected)
		slices.Sort(d.Reasons) // each starts with its node: node order
	}
	if len(d.Rejected) > 0 && HasGang(plan) {
		// A gang is all-or-nothing: if any node of the plan no longer
		// fits, commit no placement of it.
		d.Rejected = append(d.Rejected, d.Committed...)
		d.Committed = nil
		slices.Sort(d.Rejected)
	}
	// Placements that will not be committed: their victims (on any node:
	// evicting one member of a gang evicts the whole gang) stay.
	var unplaced map[string]bool
	for _, id := range d.Rejected {
		for _, a := range plan.Place[id] {
			if unplaced == nil {
				unplaced = map[string]bool{}
			}
			unplaced[a.ID] = true
		}
	}
	if len(d.Committed) > 0 {
		d.Place = make([]*api.Allocation, 0, placements)
	}
	for _, id := range d.Committed {
		d.Place = append(d.Place, plan.Place[id]...)
	}
	for _, id := range slices.Sorted(maps.Keys(plan.Stop)) {
		for _, s := range plan.Stop[id] {
			if s.PreemptedBy != "" && unplaced[s.PreemptedBy] {
				continue // its preemptor is not placed
			}
			d.Stop = append(d.Stop, s)
			if s.PreemptedBy != "" {
				if a := v.Alloc(s.AllocID); a != nil {
					d.Preempted = append(d.Preempted, a)
				}
			}
		}
	}
	return d
}

// freshIDs reports whether every placement has an id that no allocation
// ever had (the state keeps allocations until they are collected) and that
// no other placement of the plan uses: an upsert under a live
// allocation's id would silently replace it.
func freshIDs(v View, place []*api.Allocation, seen map[string]struct{}) (bool, string) {
	for _, a := range place {
		if _, dup := seen[a.ID]; dup || v.Alloc(a.ID) != nil {
			return false, "allocation id " + a.ID + " already exists"
		}
		seen[a.ID] = struct{}{}
	}
	return true, ""
}

// HasGang reports whether any placement of the plan belongs to a gang
// group.
func HasGang(plan *api.Plan) bool {
	for _, allocs := range plan.Place {
		for _, a := range allocs {
			if a.TaskGroup != nil && a.TaskGroup.Gang != nil {
				return true
			}
		}
	}
	return false
}
