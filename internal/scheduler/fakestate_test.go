package scheduler

import (
	"slices"
	"strings"

	"github.com/strata-dev/strata/api"
)

// fakeState is an in-memory State. apply commits a plan the way the plan
// applier and the state store would, keeping Node.Allocated current.
type fakeState struct {
	nodes     []*api.Node
	workloads map[string]*api.Workload
	allocs    []*api.Allocation // sorted by ID
	index     uint64
}

var _ State = (*fakeState)(nil)

func newFake(nodes ...*nodeBuilder) *fakeState {
	f := &fakeState{workloads: map[string]*api.Workload{}, index: 1}
	for _, b := range nodes {
		f.nodes = append(f.nodes, b.n)
	}
	slices.SortFunc(f.nodes, func(a, b *api.Node) int { return strings.Compare(a.ID, b.ID) })
	return f
}

func (f *fakeState) Nodes() []*api.Node { return f.nodes }
func (f *fakeState) Index() uint64      { return f.index }

func (f *fakeState) Node(id string) *api.Node {
	for _, n := range f.nodes {
		if n.ID == id {
			return n
		}
	}
	return nil
}

func (f *fakeState) Workload(ns, name string) *api.Workload {
	if w := f.workloads[name]; w != nil && api.NamespaceOf(w.Namespace) == api.NamespaceOf(ns) {
		return w
	}
	return nil
}

func (f *fakeState) AllocsByWorkload(ns, name string) []*api.Allocation {
	var out []*api.Allocation
	for _, a := range f.allocs {
		if a.Workload == name && api.NamespaceOf(a.Namespace) == api.NamespaceOf(ns) {
			out = append(out, a)
		}
	}
	return out
}

func (f *fakeState) AllocsByNode(id string) []*api.Allocation {
	var out []*api.Allocation
	for _, a := range f.allocs {
		if a.NodeID == id {
			out = append(out, a)
		}
	}
	return out
}

func (f *fakeState) alloc(id string) *api.Allocation {
	i, ok := slices.BinarySearchFunc(f.allocs, id, func(a *api.Allocation, id string) int { return strings.Compare(a.ID, id) })
	if !ok {
		return nil
	}
	return f.allocs[i]
}

func (f *fakeState) putWorkload(w *api.Workload) { f.workloads[w.Name] = w; f.index++ }

// putAlloc adds (or replaces) an allocation and refreshes Allocated.
func (f *fakeState) putAlloc(a *api.Allocation) {
	f.index++
	a.ModifyIndex = f.index
	if a.CreateIndex == 0 {
		a.CreateIndex = f.index
	}
	i, ok := slices.BinarySearchFunc(f.allocs, a.ID, func(x *api.Allocation, id string) int { return strings.Compare(x.ID, id) })
	if ok {
		f.allocs[i] = a
	} else {
		f.allocs = slices.Insert(f.allocs, i, a)
	}
	f.refreshAllocated()
}

// apply commits plan: stopped allocations become desired-stop (and lost, or
// complete when finish is true), placements are stored.
func (f *fakeState) apply(plan *api.Plan, finish bool) {
	for _, stops := range plan.Stop {
		for _, s := range stops {
			a := f.alloc(s.AllocID).Copy()
			a.DesiredStatus, a.DesiredReason, a.PreemptedBy = api.DesiredStop, s.Reason, s.PreemptedBy
			switch {
			case s.Lost:
				a.ClientStatus = api.AllocLost
			case finish:
				a.ClientStatus = api.AllocComplete
			}
			f.putAlloc(a)
		}
	}
	for _, allocs := range plan.Place {
		for _, a := range allocs {
			f.putAlloc(a.Copy())
		}
	}
	for _, u := range plan.InPlace {
		a := f.alloc(u.AllocID).Copy()
		w := f.workloads[a.Workload]
		a.WorkloadVersion, a.Priority = w.Version, w.Priority
		for _, g := range w.Groups {
			if g.Name == a.Group {
				a.TaskGroup = g
			}
		}
		f.putAlloc(a)
	}
}

func (f *fakeState) refreshAllocated() {
	for _, n := range f.nodes {
		n.Allocated = api.Resources{}
	}
	for _, a := range f.allocs {
		if n := f.Node(a.NodeID); n != nil && !a.Terminal() {
			n.Allocated = n.Allocated.Add(a.Resources)
		}
	}
}

// setClient changes an allocation's client status.
func (f *fakeState) setClient(id, status string) {
	a := f.alloc(id).Copy()
	a.ClientStatus = status
	f.putAlloc(a)
}

// planAllocs lists a plan's placements sorted by group and index.
func planAllocs(p *api.Plan) []*api.Allocation {
	var out []*api.Allocation
	for _, as := range p.Place {
		out = append(out, as...)
	}
	slices.SortFunc(out, func(a, b *api.Allocation) int {
		if c := strings.Compare(a.Group, b.Group); c != 0 {
			return c
		}
		return a.Index - b.Index
	})
	return out
}

// planStops lists a plan's stops as "allocID:reason[:lost]", sorted.
func planStops(p *api.Plan) []string {
	var out []string
	for _, ss := range p.Stop {
		for _, s := range ss {
			txt := s.AllocID + ":" + s.Reason
			if s.Lost {
				txt += ":lost"
			}
			out = append(out, txt)
		}
	}
	slices.Sort(out)
	return out
}

func schedule(f *fakeState, name string, seed int64) *api.Plan {
	return Schedule(f, &api.Evaluation{ID: "eval-" + name, Workload: name}, Options{Seed: seed})
}
