package planapply

import (
	"strings"
	"testing"

	"github.com/strata-dev/strata/api"
)

// quotaView is a fakeView whose namespaces have quotas.
type quotaView struct {
	*fakeView
	quotas map[string]*api.Quota
}

func (v quotaView) NamespaceQuota(ns string) *api.Quota { return v.quotas[ns] }

func (v quotaView) NamespaceUsage(ns string) api.QuotaUsage {
	var u api.QuotaUsage
	for _, a := range v.allocs {
		if api.CountsAgainstQuota(a) && api.NamespaceOf(a.Namespace) == ns {
			u = u.Add(api.UsageOf(a.Resources))
		}
	}
	return u
}

func cpuQuota(milli int64) *api.Quota { return &api.Quota{CPUMilli: &milli} }

// TestQuotaRule: a plan whose placements would take its namespace beyond
// its quota against the newest usage (another worker's plan committed
// meanwhile) commits no placement; the plan's own stops are credited,
// evictions only when their preemptor is committed.
func TestQuotaRule(t *testing.T) {
	tests := []struct {
		name   string
		quota  int64
		place  []*api.Allocation
		stop   map[string][]api.StopRequest
		commit bool
	}{
		{"within", 2000, []*api.Allocation{alloc("p1", "n1", "w", 1000, false)}, nil, true},
		{"a concurrent plan took the room", 1500, []*api.Allocation{alloc("p1", "n1", "w", 1000, false)}, nil, false},
		{"its own stop makes room", 1500, []*api.Allocation{alloc("p1", "n2", "w", 1000, false)},
			map[string][]api.StopRequest{"n2": {{AllocID: "other"}}}, true},
		{"an eviction for a rejected preemptor makes none", 1500, []*api.Allocation{alloc("p1", "n2", "w", 1000, false)},
			map[string][]api.StopRequest{"n2": {{AllocID: "other", PreemptedBy: "p9"}}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := quotaView{newView(), map[string]*api.Quota{"team-a": cpuQuota(tt.quota)}}
			v.allocs[1].Namespace = "team-a" // "other": 1000m of team-a, another worker's
			for _, a := range tt.place {
				a.Namespace = "team-a"
			}
			plan := &api.Plan{Namespace: "team-a", Workload: "w", Place: place(tt.place...), Stop: tt.stop}
			d := Decide(v, plan)
			if tt.commit {
				mustNotReject(t, d)
				return
			}
			if len(d.Place) != 0 || len(d.Reasons) == 0 || !strings.Contains(d.Reasons[0], "namespace team-a over quota.cpuMilli") {
				t.Fatalf("decision %+v: want every placement rejected for the quota", d)
			}
		})
	}
}

func mustNotReject(t *testing.T, d Decision) {
	t.Helper()
	if !d.Full() || len(d.Place) == 0 {
		t.Fatalf("decision %+v: want the plan committed", d)
	}
}
