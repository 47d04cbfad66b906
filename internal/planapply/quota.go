package planapply

import (
	"github.com/strata-dev/strata/api"
)

// QuotaView is what the quota rule reads of the newest state; a View that
// does not offer it (the bench's, the simulator's: one unbounded
// namespace) has no quotas to keep.
type QuotaView interface {
	// NamespaceQuota is namespace ns's quota, nil when it has none.
	NamespaceQuota(ns string) *api.Quota
	// NamespaceUsage is what ns's allocations that count against a quota
	// hold (api.CountsAgainstQuota).
	NamespaceUsage(ns string) api.QuotaUsage
}

// overQuota says why committing the placements of the nodes committed
// would take the plan's namespace beyond its quota ("" when it would
// not). Workers plan concurrently on older snapshots; this rule is where
// their plans of one namespace meet, one at a time, against the newest
// usage. The plan's stops of allocations that count are credited: they
// are committed with it.
func overQuota(v View, plan *api.Plan, committed []string) string {
	qv, ok := v.(QuotaView)
	if !ok || len(committed) == 0 {
		return ""
	}
	ns := api.NamespaceOf(plan.Namespace)
	q := qv.NamespaceQuota(ns)
	if q == nil {
		return ""
	}
	after := qv.NamespaceUsage(ns)
	placed := map[string]bool{}
	for _, id := range committed {
		for _, a := range plan.Place[id] {
			if api.NamespaceOf(a.Namespace) != ns {
				return "placement " + a.ID + " is in namespace " + api.NamespaceOf(a.Namespace) + ", not the plan's " + ns
			}
			placed[a.ID] = true
			after = after.Add(api.UsageOf(a.Resources))
		}
	}
	for _, stops := range plan.Stop {
		for _, s := range stops {
			if s.PreemptedBy != "" && !placed[s.PreemptedBy] {
				continue // stays: its preemptor is not committed
			}
			if a := v.Alloc(s.AllocID); api.CountsAgainstQuota(a) && api.NamespaceOf(a.Namespace) == ns {
				after = after.Sub(api.UsageOf(a.Resources))
			}
		}
	}
	if why := q.Exceeded(after); why != "" {
		return "namespace " + ns + " over " + why
	}
	return ""
}
