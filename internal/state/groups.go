package state

import (
	"reflect"

	"github.com/strata-dev/strata/api"
)

// Every allocation carries the spec of the group it runs
// (Allocation.TaskGroup), which the agent needs. 100,000 replicas of one
// group must not hold 100,000 copies of it: the store keeps one spec per
// group version, shared by the workload and all its allocations, and
// immutable once stored (Allocation.Copy shares it too).

// groupSharer replaces allocations' group specs by the store's copy. It
// remembers the specs it has resolved, so a batch of allocations decoded
// from one raft entry (which share a decoded spec) costs one comparison
// per distinct spec, not one per allocation.
type groupSharer struct {
	workload func(ns, name string) *api.Workload
	resolved map[*api.TaskGroup]*api.TaskGroup
	// kept lists the specs kept so far by workload, version and group name.
	kept map[groupKey][]*api.TaskGroup
}

type groupKey struct {
	namespace, workload, group string
	version                    uint64
}

func newGroupSharer(workload func(ns, name string) *api.Workload) *groupSharer {
	return &groupSharer{workload: workload, resolved: map[*api.TaskGroup]*api.TaskGroup{}, kept: map[groupKey][]*api.TaskGroup{}}
}

// canonical returns the spec a should point at: the workload's own group
// spec when the allocation runs the stored version of it, and otherwise
// the first equal spec this sharer saw. The stored state is the same
// either way — only which of equal copies is kept differs — so the FSM
// stays deterministic.
func (g *groupSharer) canonical(a *api.Allocation) *api.TaskGroup {
	tg := a.TaskGroup
	if tg == nil {
		return nil
	}
	if canon, ok := g.resolved[tg]; ok {
		return canon
	}
	canon := tg
	if wl := g.workload(a.Namespace, a.Workload); wl != nil && wl.Version == a.WorkloadVersion {
		for _, own := range wl.Groups {
			if own == tg || (own.Name == tg.Name && reflect.DeepEqual(own, tg)) {
				canon = own
				break
			}
		}
	}
	if canon == tg {
		// Not the stored workload's: share it among this batch's equals.
		key := groupKey{namespace: api.NamespaceOf(a.Namespace), workload: a.Workload, group: tg.Name, version: a.WorkloadVersion}
		found := false
		for _, c := range g.kept[key] {
			if reflect.DeepEqual(c, tg) {
				canon, found = c, true
				break
			}
		}
		if !found {
			g.kept[key] = append(g.kept[key], tg)
		}
	}
	g.resolved[tg] = canon
	return canon
}

// ShareGroups points the allocations' group specs at the copy the store
// already holds (see groupSharer). The FSM calls it on the allocations of
// a plan entry before storing them; they must be fresh objects the store
// will own.
func (w *WriteTxn) ShareGroups(allocs []*api.Allocation) {
	snap := w.Snapshot()
	g := newGroupSharer(snap.Workload)
	for _, a := range allocs {
		a.TaskGroup = g.canonical(a)
	}
}
