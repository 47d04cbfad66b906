package state

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/strata-dev/strata/api"
)

// spec returns a fresh copy of the same group spec on every call, as
// decoding one raft entry per allocation used to make.
func spec(cmd string) *api.TaskGroup {
	return &api.TaskGroup{Name: "g", Replicas: 3, Tasks: []*api.Task{{Name: "t", Driver: "mock", Command: []string{cmd},
		Env: map[string]string{"A": "b"}, Resources: api.Resources{CPUMilli: 100, MemoryBytes: 1 << 20}}}}
}

func specAlloc(id string, version uint64, tg *api.TaskGroup) *api.Allocation {
	a := alloc(id, "n1", 100)
	a.WorkloadVersion, a.TaskGroup = version, tg
	return a
}

// TestShareGroupsKeepsOneSpecPerGroupVersion: allocations decoded with
// copies of their group's spec end up pointing at the workload's own spec
// when they run its stored version, and at one shared copy otherwise.
func TestShareGroupsKeepsOneSpecPerGroupVersion(t *testing.T) {
	s := New()
	wl := &api.Workload{Name: "w", Groups: []*api.TaskGroup{spec("v2")}}
	mustWrite(t, s, 1, func(w *WriteTxn) error { return w.UpsertNode(node("n1", 100000)) })
	mustWrite(t, s, 2, func(w *WriteTxn) error {
		return w.UpsertWorkload(&api.Workload{Name: "w", Groups: []*api.TaskGroup{spec("v1")}})
	})
	mustWrite(t, s, 3, func(w *WriteTxn) error { return w.UpsertWorkload(wl) }) // version 2
	allocs := []*api.Allocation{
		specAlloc("a1", 2, spec("v2")), specAlloc("a2", 2, spec("v2")),
		specAlloc("b1", 1, spec("v1")), specAlloc("b2", 1, spec("v1")),
		specAlloc("c1", 2, spec("changed")), // same version, another spec: kept as it is
	}
	mustWrite(t, s, 4, func(w *WriteTxn) error {
		w.ShareGroups(allocs)
		for _, a := range allocs {
			if err := w.UpsertAlloc(a); err != nil {
				return err
			}
		}
		return nil
	})
	snap := s.Snapshot()
	own := snap.Workload("", "w").Groups[0]
	tests := []struct {
		id   string
		want *api.TaskGroup
	}{
		{"a1", own}, {"a2", own},
		{"b1", snap.Alloc("b1").TaskGroup}, {"b2", snap.Alloc("b1").TaskGroup},
	}
	for _, tc := range tests {
		if got := snap.Alloc(tc.id).TaskGroup; got != tc.want {
			t.Errorf("%s: spec %p, want %p", tc.id, got, tc.want)
		}
	}
	if got := snap.Alloc("b1").TaskGroup; got == own || got.Tasks[0].Command[0] != "v1" {
		t.Errorf("b1 runs version 1 and must keep its spec, got %+v", got.Tasks[0])
	}
	if got := snap.Alloc("c1").TaskGroup; got == own || got.Tasks[0].Command[0] != "changed" {
		t.Errorf("c1's spec differs from the workload's and must be kept, got %+v", got.Tasks[0])
	}
}

// legacyDump is the shape dumps had before specs were listed once: every
// allocation embeds its spec.
type legacyDump struct {
	Index     uint64            `json:"index"`
	Workloads []*api.Workload   `json:"workloads"`
	Nodes     []*api.Node       `json:"nodes"`
	Allocs    []*api.Allocation `json:"allocs"`
	Evals     []*api.Evaluation `json:"evals"`
	Indexes   map[string]uint64 `json:"indexes"`
}

// TestDumpListsEachSpecOnce: 200 allocations of one group put its spec in
// the dump once, restore shares it with the workload, and a dump in the
// old form (a spec per allocation) restores to the same state.
func TestDumpListsEachSpecOnce(t *testing.T) {
	s := New()
	mustWrite(t, s, 1, func(w *WriteTxn) error { return w.UpsertNode(node("n1", 1_000_000)) })
	mustWrite(t, s, 2, func(w *WriteTxn) error {
		return w.UpsertWorkload(&api.Workload{Name: "w", Groups: []*api.TaskGroup{spec("x")}})
	})
	mustWrite(t, s, 3, func(w *WriteTxn) error {
		var allocs []*api.Allocation
		for i := range 200 {
			allocs = append(allocs, specAlloc(fmt.Sprintf("a%03d", i), 1, spec("x")))
		}
		w.ShareGroups(allocs)
		for _, a := range allocs {
			if err := w.UpsertAlloc(a); err != nil {
				return err
			}
		}
		return nil
	})
	d := s.Snapshot().Dump()
	var buf bytes.Buffer
	if err := d.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), `"command":["x"]`); n != 2 { // the workload's and the allocations' one
		t.Fatalf("the spec appears %d times in the dump, want 2", n)
	}
	legacy, err := json.Marshal(&legacyDump{Index: d.Index, Workloads: d.Workloads, Nodes: d.Nodes, Allocs: d.Allocs, Evals: d.Evals, Indexes: d.Indexes})
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"compact": buf.Bytes(), "legacy": legacy} {
		t.Run(name, func(t *testing.T) {
			var back Dump
			if err := json.Unmarshal(data, &back); err != nil {
				t.Fatal(err)
			}
			r, err := Restore(&back)
			if err != nil {
				t.Fatal(err)
			}
			snap := r.Snapshot()
			own := snap.Workload("", "w").Groups[0]
			allocs := snap.Allocs(nil)
			if len(allocs) != 200 || snap.Node("n1").Allocated.CPUMilli != 200*100 {
				t.Fatalf("restored %d allocations, allocated %d", len(allocs), snap.Node("n1").Allocated.CPUMilli)
			}
			for _, a := range allocs {
				if a.TaskGroup != own {
					t.Fatalf("%s does not share the workload's spec", a.ID)
				}
			}
		})
	}
}
