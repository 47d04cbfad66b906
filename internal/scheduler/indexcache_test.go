package scheduler_test

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/scheduler"
	"github.com/strata-dev/strata/internal/state"
)

// plainState hides the snapshot's topology version from the scheduler.
type plainState struct{ s *state.Snapshot }

func (p plainState) Nodes() []*api.Node                     { return p.s.Nodes() }
func (p plainState) Node(id string) *api.Node               { return p.s.Node(id) }
func (p plainState) Workload(ns, name string) *api.Workload { return p.s.Workload(ns, name) }
func (p plainState) AllocsByWorkload(ns, n string) []*api.Allocation {
	return p.s.AllocsByWorkload(ns, n)
}
func (p plainState) AllocsByNode(id string) []*api.Allocation { return p.s.AllocsByNode(id) }
func (p plainState) Index() uint64                            { return p.s.Index() }

func mustWrite(t *testing.T, s *state.Store, index uint64, fn func(w *state.WriteTxn) error) {
	t.Helper()
	if err := s.Write(index, fn); err != nil {
		t.Fatalf("write at %d: %v", index, err)
	}
}

func rackNode(i int, rack string) *api.Node {
	n := &api.Node{ID: fmt.Sprintf("n%02d", i), Status: api.NodeReady, Capacity: api.Resources{CPUMilli: 8000, MemoryBytes: 1 << 30}}
	n.Name = n.ID
	n.Labels = map[string]string{"rack": rack, "zone": fmt.Sprint("z", i%2)}
	n.NUMA = []api.NUMANode{{ID: 0, CPUs: []int{0, 1, 2, 3}}, {ID: 1, CPUs: []int{4, 5, 6, 7}}}
	return n
}

// TestIndexCacheFollowsTopology: over the server's store, the cache keeps
// one NodeIndex while only allocations and statuses change, makes a new
// one when a node is added or its labels change, and plans computed with
// it are the plans computed without it, before and after each change.
func TestIndexCacheFollowsTopology(t *testing.T) {
	s := state.New()
	var cache scheduler.IndexCache
	index := uint64(0)
	write := func(fn func(w *state.WriteTxn) error) {
		t.Helper()
		index++
		mustWrite(t, s, index, fn)
	}
	for i := range 8 {
		write(func(w *state.WriteTxn) error { return w.UpsertNode(rackNode(i, fmt.Sprint("r", i/3))) })
	}
	wl := &api.Workload{Name: "w", Priority: 50, Groups: []*api.TaskGroup{{
		Name: "g", Replicas: 6,
		Tasks: []*api.Task{{Name: "t", Resources: api.Resources{CPUMilli: 1000, MemoryBytes: 1 << 20}}},
		Placement: api.Placement{
			Require: []api.LabelRule{{Key: "rack", Op: api.OpNotEqual, Values: []string{"r2"}}},
			Spread:  []api.SpreadRule{{Key: "rack", MaxSkew: 1, Mode: api.ModeHard}},
		},
	}}}
	write(func(w *state.WriteTxn) error { return w.UpsertWorkload(wl) })

	var shared *scheduler.NodeIndex
	step := 0
	schedule := func(wantNew bool) {
		t.Helper()
		step++
		snap := s.Snapshot()
		eval := &api.Evaluation{ID: fmt.Sprint("e", step), Workload: "w"}
		got := scheduler.Schedule(cache.Bind(snap), eval, scheduler.Options{Seed: int64(step)})
		want := scheduler.Schedule(plainState{snap}, eval, scheduler.Options{Seed: int64(step)})
		a, _ := json.Marshal(got)
		b, _ := json.Marshal(want)
		if string(a) != string(b) {
			t.Fatalf("step %d: the index changed the plan:\n got %s\nwant %s", step, a, b)
		}
		cached := scheduler.CurrentIndex(&cache)
		if isNew := cached != shared; isNew != wantNew {
			t.Fatalf("step %d: new index %v, want %v", step, isNew, wantNew)
		}
		shared = cached
		write(func(w *state.WriteTxn) error {
			for _, as := range got.Place {
				for _, a := range as {
					if err := w.UpsertAlloc(a); err != nil {
						return err
					}
				}
			}
			return nil
		})
		wl.Groups[0].Replicas += 3
		write(func(w *state.WriteTxn) error { return w.UpsertWorkload(wl) })
	}
	schedule(true)
	schedule(false) // allocations changed every node's Allocated
	write(func(w *state.WriteTxn) error { return w.UpdateNodeStatus("n01", api.NodeDraining, "test") })
	schedule(false)
	write(func(w *state.WriteTxn) error { return w.UpsertNode(rackNode(3, "r1")) }) // re-registered as it was
	schedule(false)
	write(func(w *state.WriteTxn) error { return w.UpsertNode(rackNode(0, "r2")) }) // moved to an excluded rack
	schedule(true)
	write(func(w *state.WriteTxn) error { return w.UpsertNode(rackNode(8, "r3")) }) // a new node
	schedule(true)
	n := rackNode(4, "r1")
	n.NUMA[1].CPUs = []int{4, 5}
	write(func(w *state.WriteTxn) error { return w.UpsertNode(n) }) // a new NUMA layout
	schedule(true)
}

// TestIndexCacheSharedByConcurrentSnapshots: workers asking at once get
// indexes of their own snapshots' nodes (run with -race).
func TestIndexCacheSharedByConcurrentSnapshots(t *testing.T) {
	s := state.New()
	var cache scheduler.IndexCache
	for i := range 20 {
		mustWrite(t, s, uint64(i+1), func(w *state.WriteTxn) error { return w.UpsertNode(rackNode(i, fmt.Sprint("r", i%4))) })
	}
	wl := &api.Workload{Name: "w", Groups: []*api.TaskGroup{{Name: "g", Replicas: 10,
		Tasks:     []*api.Task{{Name: "t", Resources: api.Resources{CPUMilli: 500, MemoryBytes: 1 << 20}}},
		Placement: api.Placement{Spread: []api.SpreadRule{{Key: "rack", MaxSkew: 1, Mode: api.ModeHard}}}}}}
	mustWrite(t, s, 100, func(w *state.WriteTxn) error { return w.UpsertWorkload(wl) })
	var wg sync.WaitGroup
	plans := make([]string, 4)
	for k := range plans {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := scheduler.Schedule(cache.Bind(s.Snapshot()), &api.Evaluation{ID: "e", Workload: "w"}, scheduler.Options{Seed: 1})
			b, _ := json.Marshal(p)
			plans[k] = string(b)
		}()
	}
	wg.Wait()
	for k := range plans {
		if plans[k] != plans[0] {
			t.Fatalf("plan %d differs:\n%s\n%s", k, plans[k], plans[0])
		}
	}
}

// TestIndexCacheAcrossStores: a store restored from a raft snapshot counts
// topology changes anew, so it may reach the version an earlier store's
// index was cached under with other nodes. The cache must not lend it
// that index: plans over the new store are the plans without the cache.
func TestIndexCacheAcrossStores(t *testing.T) {
	var cache scheduler.IndexCache
	wl := &api.Workload{Name: "w", Priority: 50, Groups: []*api.TaskGroup{{Name: "g", Replicas: 2,
		Tasks:     []*api.Task{{Name: "t", Resources: api.Resources{CPUMilli: 1000, MemoryBytes: 1 << 20}}},
		Placement: api.Placement{Require: []api.LabelRule{{Key: "rack", Op: api.OpNotEqual, Values: []string{"r1"}}}}}}}
	build := func(racks ...string) *state.Store {
		s := state.New()
		for i, r := range racks {
			mustWrite(t, s, uint64(i+1), func(w *state.WriteTxn) error { return w.UpsertNode(rackNode(i, r)) })
		}
		mustWrite(t, s, 100, func(w *state.WriteTxn) error { return w.UpsertWorkload(wl) })
		return s
	}
	for k, s := range []*state.Store{build("r0", "r0", "r1", "r1"), build("r1", "r1", "r0", "r0")} {
		snap := s.Snapshot()
		eval := &api.Evaluation{ID: "e", Workload: "w"}
		got, _ := json.Marshal(scheduler.Schedule(cache.Bind(snap), eval, scheduler.Options{Seed: 1}))
		want, _ := json.Marshal(scheduler.Schedule(plainState{snap}, eval, scheduler.Options{Seed: 1}))
		if string(got) != string(want) {
			t.Fatalf("store %d: the cache changed the plan:\n got %s\nwant %s", k, got, want)
		}
	}
}
