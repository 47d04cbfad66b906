package scheduler

import (
	"github.com/strata-dev/strata/api"
)

// QuotaState is what a State offers when its namespaces have quotas
// (docs/tenants.md): the server's snapshot does; the bench's and the
// simulator's states, with one unbounded namespace, do not, and their
// groups never meet the quota stage's refusal.
type QuotaState interface {
	// NamespaceQuota is namespace ns's quota, nil when it has none.
	NamespaceQuota(ns string) *api.Quota
	// NamespaceUsage is what namespace ns's allocations that count
	// against a quota hold (api.CountsAgainstQuota).
	NamespaceUsage(ns string) api.QuotaUsage
}

// quotaStateOf is st's QuotaState, looking through the IndexCache's
// binding; nil when st has none.
func quotaStateOf(st State) QuotaState {
	if b, ok := st.(boundState); ok {
		st = b.State
	}
	qs, _ := st.(QuotaState)
	return qs
}

// quotaFilter keeps a group whose next replica would take its namespace
// beyond its quota off every node, with the quota as the reason: the
// group stays pending and `strata status` says why. Its verdict does not
// depend on the node, so it is computed once per change of the plan and
// the filter stands first in the chain (every node's first reason).
//
// The namespace's usage is tallied where the plan is built: what the
// snapshot says the namespace holds, less this workload's allocations the
// plan stops, plus every placement the plan made so far (a plan places
// one workload, so all of them are the namespace's). Evictions of other
// workloads of the namespace are not credited: the tally may be above the
// truth, never below, so a plan never exceeds the quota even before the
// plan applier's quota rule (internal/planapply) re-checks it against the
// newest state, where concurrent workers' plans of the namespace meet.
//
// It is of kindDynamic: preemption does not try to lift it, so a group
// beyond its quota never evicts anyone, of its own tenant or another's.
type quotaFilter struct {
	resolved bool
	quota    *api.Quota // nil: the namespace is unbounded, the filter passes all
	base     api.QuotaUsage

	version  int            // len(c.changes) the verdict was computed at; -1: never
	verdict  string         // "" or why the next replica exceeds the quota
	placed   api.QuotaUsage // of c.rel.log[:logSeen]
	logSeen  int
	lastSeen *api.Allocation // c.rel.log[logSeen-1].alloc: detects a rollback
	stopSeen int             // len(c.stopping) released was computed at
	released api.QuotaUsage  // this workload's counted allocations the plan stops
}

func newQuotaFilter() *quotaFilter { return &quotaFilter{version: -1} }

func (*quotaFilter) name() string        { return "quota" }
func (*quotaFilter) kind() stageKind     { return kindDynamic }
func (*quotaFilter) key(g *group) string { return "quota" }

func (f *quotaFilter) check(g *group, c *cell, _ *nodeState, _ int) string {
	if !f.resolved {
		f.resolve(g, c)
	}
	if f.quota == nil {
		return ""
	}
	if v := len(c.changes); v != f.version || f.version < 0 {
		f.version = v
		f.verdict = f.judge(g, c)
	}
	return f.verdict
}

// passesAll implements everyNodePasser: a namespace without a quota.
func (f *quotaFilter) passesAll(g *group, c *cell) bool {
	if !f.resolved {
		f.resolve(g, c)
	}
	return f.quota == nil
}

func (f *quotaFilter) resolve(g *group, c *cell) {
	f.resolved = true
	w := g.req.Workload
	qs := quotaStateOf(c.st)
	if w == nil || qs == nil {
		return
	}
	ns := api.NamespaceOf(w.Namespace)
	f.quota = qs.NamespaceQuota(ns)
	f.base = qs.NamespaceUsage(ns)
}

// judge is the verdict on the plan as it stands.
func (f *quotaFilter) judge(g *group, c *cell) string {
	log := c.rel.log
	if len(log) < f.logSeen || (f.logSeen > 0 && log[f.logSeen-1].alloc != f.lastSeen) {
		f.placed, f.logSeen = api.QuotaUsage{}, 0 // rolled back: count again
	}
	for _, p := range log[f.logSeen:] {
		f.placed = f.placed.Add(api.UsageOf(p.alloc.Resources))
	}
	f.logSeen = len(log)
	f.lastSeen = nil
	if f.logSeen > 0 {
		f.lastSeen = log[f.logSeen-1].alloc
	}
	if len(c.stopping) != f.stopSeen {
		f.stopSeen = len(c.stopping)
		f.released = api.QuotaUsage{}
		w := g.req.Workload
		for _, a := range c.st.AllocsByWorkload(w.Namespace, w.Name) {
			if c.stopping[a.ID] && api.CountsAgainstQuota(a) {
				f.released = f.released.Add(api.UsageOf(a.Resources))
			}
		}
	}
	next := f.base.Sub(f.released).Add(f.placed).Add(api.UsageOf(g.req.Resources))
	if why := f.quota.Exceeded(next); why != "" {
		return "namespace " + api.NamespaceOf(g.req.Workload.Namespace) + " over " + why
	}
	return ""
}

// overQuota reports whether g's next replica would take its namespace
// beyond its quota. The selection hands out candidates judged before the
// latest placement, and the quota's verdict changes with every placement
// on any node, so placeIn asks before each replica.
func overQuota(g *group, c *cell) bool {
	for _, f := range g.filters {
		if q, ok := f.(*quotaFilter); ok {
			return q.check(g, c, nil, 0) != ""
		}
	}
	return false
}
