package nodesim

import (
	"reflect"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
)

func TestShapeNode(t *testing.T) {
	cases := []struct {
		name   string
		shape  Shape
		index  int
		labels map[string]string
		numa   []api.NUMANode
		cpu    int64
	}{
		{"defaults", Shape{}, 7, map[string]string{"node": "sim-000007"},
			[]api.NUMANode{{ID: 0, CPUs: seq(0, 16), MemoryBytes: 64 << 30}}, 16000},
		{"zones, racks and labels", Shape{Zones: 3, Racks: 10, Labels: map[string]string{"pool": "batch"}}, 14,
			map[string]string{"node": "sim-000014", "zone": "zone-2", "rack": "rack-4", "pool": "batch"},
			[]api.NUMANode{{ID: 0, CPUs: seq(0, 16), MemoryBytes: 64 << 30}}, 16000},
		{"two NUMA nodes split cores and memory", Shape{CPUMilli: 8000, MemoryBytes: 32 << 30, NUMA: 2}, 0,
			map[string]string{"node": "sim-000000"},
			[]api.NUMANode{{ID: 0, CPUs: seq(0, 4), MemoryBytes: 16 << 30}, {ID: 1, CPUs: seq(4, 8), MemoryBytes: 16 << 30}}, 8000},
		{"fewer cores than NUMA nodes: no layout", Shape{CPUMilli: 1500, NUMA: 4}, 0,
			map[string]string{"node": "sim-000000"}, nil, 1500},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := c.shape.Node("sim", c.index)
			if n.ID != NodeID("sim", c.index) || n.Name != n.ID {
				t.Fatalf("id %q name %q, want both %q", n.ID, n.Name, NodeID("sim", c.index))
			}
			if !reflect.DeepEqual(n.Labels, c.labels) {
				t.Fatalf("labels %v, want %v", n.Labels, c.labels)
			}
			if !reflect.DeepEqual(n.NUMA, c.numa) {
				t.Fatalf("numa %+v, want %+v", n.NUMA, c.numa)
			}
			if n.Capacity.CPUMilli != c.cpu {
				t.Fatalf("cpu %d, want %d", n.Capacity.CPUMilli, c.cpu)
			}
		})
	}
}

func seq(from, to int) []int {
	var out []int
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

func TestSchedulePopsDueNodesEarliestFirst(t *testing.T) {
	var s schedule
	t0 := time.Unix(100, 0)
	s.Add(1, t0.Add(3*time.Second))
	s.Add(2, t0.Add(1*time.Second))
	s.Add(3, t0.Add(2*time.Second))
	s.Add(4, t0.Add(9*time.Second))
	if got := s.PopDue(t0, 10); len(got) != 0 {
		t.Fatalf("popped %v before anything was due", got)
	}
	got := s.PopDue(t0.Add(5*time.Second), 2)
	if len(got) != 2 || got[0].node != 2 || got[1].node != 3 {
		t.Fatalf("popped %v, want nodes 2 then 3 (at most 2)", got)
	}
	if got := s.PopDue(t0.Add(5*time.Second), 10); len(got) != 1 || got[0].node != 1 {
		t.Fatalf("popped %v, want node 1", got)
	}
	if next, ok := s.Next(); !ok || !next.Equal(t0.Add(9*time.Second)) || s.Len() != 1 {
		t.Fatalf("next %v %v len %d, want node 4 at +9s", next, ok, s.Len())
	}
}
