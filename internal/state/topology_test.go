package state

import (
	"fmt"
	"testing"

	"github.com/strata-dev/strata/api"
)

func rackNode(i int, rack string) *api.Node {
	n := node(fmt.Sprintf("n%02d", i), 8000)
	n.Labels = map[string]string{"rack": rack, "zone": fmt.Sprint("z", i%2)}
	n.NUMA = []api.NUMANode{{ID: 0, CPUs: []int{0, 1, 2, 3}}, {ID: 1, CPUs: []int{4, 5, 6, 7}}}
	return n
}

// TestTopologyVersionFollowsNodes: the version moves when a node is added,
// relabelled or given another NUMA layout, and stays while only
// allocations and statuses change (every allocation write copies its
// node, so the nodes table's own index cannot tell).
func TestTopologyVersionFollowsNodes(t *testing.T) {
	s := New()
	for i := range 4 {
		mustWrite(t, s, uint64(i+1), func(w *WriteTxn) error { return w.UpsertNode(rackNode(i, "r1")) })
	}
	relayout := rackNode(2, "r1")
	relayout.NUMA[1].CPUs = []int{4, 5}
	steps := []struct {
		name  string
		write func(w *WriteTxn) error
		moves bool
	}{
		{"allocation placed", func(w *WriteTxn) error { return w.UpsertAlloc(alloc("a1", "n01", 1000)) }, false},
		{"status changed", func(w *WriteTxn) error { return w.UpdateNodeStatus("n01", api.NodeDraining, "test") }, false},
		{"re-registered as it was", func(w *WriteTxn) error { return w.UpsertNode(rackNode(3, "r1")) }, false},
		{"relabelled", func(w *WriteTxn) error { return w.UpsertNode(rackNode(0, "r2")) }, true},
		{"new node", func(w *WriteTxn) error { return w.UpsertNode(rackNode(9, "r3")) }, true},
		{"new NUMA layout", func(w *WriteTxn) error { return w.UpsertNode(relayout) }, true},
	}
	index := uint64(10)
	for _, st := range steps {
		_, before := s.Snapshot().TopologyVersion()
		index++
		mustWrite(t, s, index, st.write)
		store, after := s.Snapshot().TopologyVersion()
		if store != s {
			t.Fatalf("%s: the version names store %v, not the snapshot's", st.name, store)
		}
		if moved := after != before; moved != st.moves {
			t.Fatalf("%s: version %d → %d, moved %v, want %v", st.name, before, after, moved, st.moves)
		}
	}
}
