package state

import (
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-dev/strata/api"
)

// TestWorkloadTalliesFollowTheWorkloads: after any sequence of
// registrations, stops and purges in two namespaces, the incremental
// counts equal a count of the stored workloads, and so do a restored
// store's.
func TestWorkloadTalliesFollowTheWorkloads(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		st := New()
		if err := st.Write(1, func(w *WriteTxn) error { return w.UpsertNamespace(&api.Namespace{Name: "team"}) }); err != nil {
			t.Fatal(err)
		}
		for i := range rapid.IntRange(1, 40).Draw(t, "steps") {
			ns := rapid.SampledFrom([]string{"", "default", "team"}).Draw(t, "ns")
			name := rapid.SampledFrom([]string{"a", "b", "c"}).Draw(t, "name")
			op := rapid.IntRange(0, 2).Draw(t, "op")
			err := st.Write(uint64(i+2), func(w *WriteTxn) error {
				switch op {
				case 0:
					wl := &api.Workload{Name: name, Namespace: ns}
					for range rapid.IntRange(1, 3).Draw(t, "groups") {
						wl.Groups = append(wl.Groups, &api.TaskGroup{Replicas: rapid.IntRange(0, 1000).Draw(t, "replicas")})
					}
					return w.UpsertWorkload(wl)
				case 1:
					return w.StopWorkload(ns, name)
				}
				return w.DeleteWorkload(ns, name)
			})
			if err != nil && !strings.Contains(err.Error(), "not found") {
				t.Fatal(err)
			}
		}
		check := func(s *Store, what string) {
			snap := s.Snapshot()
			want := map[string][2]int64{}
			for _, wl := range snap.Workloads(nil) {
				n, r := tallyOf(wl)
				for _, k := range []string{"", api.NamespaceOf(wl.Namespace)} {
					c := want[k]
					want[k] = [2]int64{c[0] + n, c[1] + r}
				}
			}
			for _, ns := range []string{"", "default", "team"} {
				n, r := snap.WorkloadTally(ns)
				if got := [2]int64{n, r}; got != want[ns] {
					t.Fatalf("%s: namespace %q counts %v, its workloads %v", what, ns, got, want[ns])
				}
			}
		}
		check(st, "the store")
		restored, err := Restore(st.Snapshot().Dump())
		if err != nil {
			t.Fatal(err)
		}
		check(restored, "a restored store")
	})
}

// TestWorkloadLimits: a registration past a bound is refused naming the
// field and the bound; one that does not grow a count passes, even over a
// bound lowered since.
func TestWorkloadLimits(t *testing.T) {
	st := New()
	reg := func(idx uint64, name string, replicas int) {
		t.Helper()
		if err := st.Write(idx, func(w *WriteTxn) error {
			return w.UpsertWorkload(&api.Workload{Name: name, Groups: []*api.TaskGroup{{Replicas: replicas}}})
		}); err != nil {
			t.Fatal(err)
		}
	}
	reg(1, "a", 60)
	reg(2, "b", 30)
	wl := func(name string, replicas int) *api.Workload {
		return &api.Workload{Name: name, Groups: []*api.TaskGroup{{Replicas: replicas}}}
	}
	tests := []struct {
		name   string
		wl     *api.Workload
		limits WorkloadLimits
		field  string // "": allowed
		says   string
	}{
		{"within every bound", wl("c", 10), WorkloadLimits{CellWorkloads: 3, CellReplicas: 100, NamespaceWorkloads: 3, NamespaceReplicas: 100}, "", ""},
		{"one workload too many in the cell", wl("c", 1), WorkloadLimits{CellWorkloads: 2}, "metadata.name", "the cell would hold 3 workloads, above its limit of 2"},
		{"one too many in the namespace", wl("c", 1), WorkloadLimits{NamespaceWorkloads: 2}, "metadata.name", `namespace "default" would hold 3 workloads`},
		{"replicas past the cell's", wl("c", 11), WorkloadLimits{CellReplicas: 100}, "spec.groups[0].replicas", "101 replicas of running workloads, above its limit of 100"},
		{"replicas past the namespace's", wl("c", 11), WorkloadLimits{NamespaceReplicas: 100}, "spec.groups[0].replicas", `namespace "default" would hold 101 replicas`},
		{"an update that grows past it", wl("a", 71), WorkloadLimits{CellReplicas: 100}, "spec.groups[0].replicas", "101 replicas"},
		{"an update within it", wl("a", 70), WorkloadLimits{CellReplicas: 100}, "", ""},
		{"a shrink over a lowered bound", wl("a", 50), WorkloadLimits{CellReplicas: 10, CellWorkloads: 1}, "", ""},
		{"no bounds (an entry from before them)", wl("c", 1_000_000), WorkloadLimits{}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := st.Snapshot().CheckWorkloadLimits(tt.wl, tt.limits)
			if tt.field == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			le, ok := err.(*LimitError)
			if !ok || le.Field != tt.field || !strings.Contains(le.Msg, tt.says) {
				t.Fatalf("got %v, want a limit error on %s saying %q", err, tt.field, tt.says)
			}
		})
	}
	// A stopped workload's replicas do not count; a purged one counts not at all.
	if err := st.Write(3, func(w *WriteTxn) error { return w.StopWorkload("", "a") }); err != nil {
		t.Fatal(err)
	}
	if n, r := st.Snapshot().WorkloadTally(""); n != 2 || r != 30 {
		t.Fatalf("after a stop: %d workloads, %d replicas; want 2 and 30", n, r)
	}
	if err := st.Write(4, func(w *WriteTxn) error { return w.DeleteWorkload("", "a") }); err != nil {
		t.Fatal(err)
	}
	if n, r := st.Snapshot().WorkloadTally("default"); n != 1 || r != 30 {
		t.Fatal(fmt.Sprintf("after a purge: %d workloads, %d replicas; want 1 and 30", n, r))
	}
}
