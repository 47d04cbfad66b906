package scheduler

import (
	"fmt"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/disruption"
)

// budgets keeps, for one plan, the disruption budgets of the groups whose
// allocations preemption may evict: a victim may not take its group beyond
// disruption.Allowed, counted over the state the plan starts from, with
// every victim the plan has already chosen (in any group's placement)
// charged to it.
//
// Only groups that declare a disruption block are bounded. A group without
// one gets disruption.DefaultMaxUnavailable for drains and deployments,
// but is freely preemptible: preemption is how priority works, and a
// default of one would let a high-priority workload evict a single
// replica of each low-priority batch group until it recovered elsewhere,
// which with a full cell is never. A service that must stay up says so
// with `disruption: {maxUnavailable: N}` (docs/nodes.md).
//
// A victim is charged when it serves (disruption.Serving): evicting a
// replica that does not serve takes nothing out of service, though its
// group's replicas that do not serve already spend the budget.
type budgets struct {
	st       Workloads
	stopping map[string]bool            // what the plan stops already: charged
	groups   map[groupKey]*victimBudget // nil values: unbounded groups
	// blocked holds, per group and node, the budget that kept the last
	// victim search there from a set (failure.go words it).
	blocked map[blockKey]*victimBudget
}

// blockKey is a group's victim search on one node.
type blockKey struct {
	g    *group
	node int
}

// Workloads is what the budgets read of a state besides the plan: every
// State, and the plan applier's views, offer it.
type Workloads interface {
	Workload(ns, name string) *api.Workload // nil if purged
	AllocsByWorkload(ns, name string) []*api.Allocation
}

// VictimBudgets is the budgets rule for the plan applier
// (internal/planapply): the engine's own, so that what a plan may evict is
// decided by one rule, on the plan's snapshot and again on the newest
// state.
type VictimBudgets struct{ b budgets }

// NewVictimBudgets judges evictions against st.
func NewVictimBudgets(st Workloads) *VictimBudgets {
	return &VictimBudgets{b: budgets{st: st, stopping: map[string]bool{}}}
}

// Charge evicts victims if that takes no group beyond its disruption
// budget, counting the victims charged before, and returns ""; otherwise
// it charges nothing and returns why, in the words of the engine's
// failures.
func (v *VictimBudgets) Charge(victims []*api.Allocation) string {
	if vb := v.b.over(victims); vb != nil {
		return vb.reason()
	}
	for _, a := range victims {
		v.b.stopping[a.ID] = true
	}
	return ""
}

// groupKey names a group across the cell.
type groupKey struct{ ns, workload, group string }

// victimBudget is one bounded group's budget.
type victimBudget struct {
	name           string // workload/group, namespace-qualified outside the default
	maxUnavailable int
	allowed        int               // disruption.Allowed before the plan
	members        []*api.Allocation // the group's serving allocations
}

// over reports the budget evicting set (besides what the plan already
// evicts) would exceed, or nil when every group stays within its budget.
func (b *budgets) over(set []*api.Allocation) *victimBudget {
	var charged map[*victimBudget]int
	for _, v := range set {
		vb := b.of(v)
		if vb == nil || !disruption.Serving(v) || b.stopping[v.ID] {
			continue
		}
		if charged == nil {
			charged = map[*victimBudget]int{}
		}
		charged[vb]++
		if vb.taken(b.stopping)+charged[vb] > vb.allowed {
			return vb
		}
	}
	return nil
}

// reason is the failure text of a placement that vb's budget blocked.
func (vb *victimBudget) reason() string {
	return fmt.Sprintf("preemption would exceed the disruption budget of %s (maxUnavailable %d)", vb.name, vb.maxUnavailable)
}

// taken counts the group's serving allocations the plan already stops.
func (vb *victimBudget) taken(stopping map[string]bool) int {
	n := 0
	for _, a := range vb.members {
		if stopping[a.ID] {
			n++
		}
	}
	return n
}

// of returns a's group's budget, or nil when the group declares none.
func (b *budgets) of(a *api.Allocation) *victimBudget {
	ns := api.NamespaceOf(a.Namespace)
	key := groupKey{ns, a.Workload, a.Group}
	if vb, ok := b.groups[key]; ok {
		return vb
	}
	if b.groups == nil {
		b.groups = make(map[groupKey]*victimBudget)
	}
	vb := b.load(a, ns)
	b.groups[key] = vb
	return vb
}

// load reads a's group from the state: its spec (the workload's current
// one, or the allocation's when the workload is gone) and its replicas.
func (b *budgets) load(a *api.Allocation, ns string) *victimBudget {
	tg := a.TaskGroup
	desired := 0
	if w := b.st.Workload(ns, a.Workload); w != nil {
		for _, g := range w.Groups {
			if g.Name == a.Group {
				tg = g
				if !w.Stopped {
					desired = g.Replicas
				}
			}
		}
	}
	if tg == nil || tg.Disruption == nil {
		return nil
	}
	name := a.Workload + "/" + a.Group
	if ns != api.NamespaceOf("") {
		name = ns + "/" + name
	}
	vb := &victimBudget{name: name, maxUnavailable: disruption.MaxUnavailable(tg)}
	g := disruption.Group{Desired: desired, MaxUnavailable: vb.maxUnavailable}
	// Per replica index: live copies, serving ones, and whether one is
	// migrating. An index with two live copies not both serving (a move
	// or an update under way) or a migration in flight is a move in
	// flight, charged as the mover charges it (moves.go).
	type replica struct {
		live, serving int
		migrating     bool
	}
	replicas := map[int]*replica{}
	for _, m := range b.st.AllocsByWorkload(ns, a.Workload) {
		if m.Group != a.Group || !live(m) {
			continue
		}
		r := replicas[m.Index]
		if r == nil {
			r = &replica{}
			replicas[m.Index] = r
		}
		r.live++
		r.migrating = r.migrating || m.Migration.Active()
		if disruption.Serving(m) {
			r.serving++
			vb.members = append(vb.members, m)
		}
	}
	for idx, r := range replicas {
		if idx >= desired {
			continue // beyond the group's count: on its way out
		}
		if r.serving > 0 {
			g.Serving++
		}
		if (r.live > 1 && r.serving < r.live) || r.migrating {
			g.Moving++
		}
	}
	vb.allowed = disruption.Allowed(g)
	return vb
}

// block records that vb kept g's victim search on node i from a set;
// nil clears it.
// blocks reports whether a budget blocked preemption for g on some node.
func (b *budgets) blocks(g *group) bool {
	for k := range b.blocked {
		if k.g == g {
			return true
		}
	}
	return false
}

func (b *budgets) block(g *group, i int, vb *victimBudget) {
	switch {
	case vb != nil:
		if b.blocked == nil {
			b.blocked = make(map[blockKey]*victimBudget)
		}
		b.blocked[blockKey{g, i}] = vb
	case b.blocked != nil:
		delete(b.blocked, blockKey{g, i})
	}
}
