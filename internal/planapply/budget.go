package planapply

import (
	"maps"
	"slices"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/scheduler"
)

// overBudget splits the committed nodes, in node order, into those whose
// placements' evictions keep every victim group within its disruption
// budget against the newest state, counting the evictions of the nodes
// kept before them, and those that would not (with the reason). The rule
// is the engine's (scheduler.VictimBudgets): plans computed on older
// snapshots, each within the budgets there, cannot add up beyond them.
func overBudget(v View, plan *api.Plan, committed []string) (keep, rejected, reasons []string) {
	placedOn := map[string]string{} // placement id → its node
	for _, id := range committed {
		for _, a := range plan.Place[id] {
			placedOn[a.ID] = id
		}
	}
	var victims map[string][]*api.Allocation // by the preemptor's node
	for _, id := range slices.Sorted(maps.Keys(plan.Stop)) {
		for _, s := range plan.Stop[id] {
			node := placedOn[s.PreemptedBy]
			if s.PreemptedBy == "" || node == "" {
				continue
			}
			if a := v.Alloc(s.AllocID); a != nil {
				if victims == nil {
					victims = map[string][]*api.Allocation{}
				}
				victims[node] = append(victims[node], a)
			}
		}
	}
	if victims == nil {
		return committed, nil, nil
	}
	budgets := scheduler.NewVictimBudgets(v)
	for _, id := range committed {
		if why := budgets.Charge(victims[id]); why != "" {
			rejected = append(rejected, id)
			reasons = append(reasons, id+": "+why)
			continue
		}
		keep = append(keep, id)
	}
	return keep, rejected, reasons
}
