package scheduler

import (
	"fmt"
	"testing"

	"github.com/strata-dev/strata/api"
	"pgregory.net/rapid"
)

// TestPropertyReleaseUndoesApply: on random nodes filled by random plans,
// a detail with some allocations released equals the detail rebuilt
// without them (what fitsWithout relies on).
func TestPropertyReleaseUndoesApply(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var nodes []*nodeBuilder
		for i := range rapid.IntRange(1, 3).Draw(t, "nodes") {
			nodes = append(nodes, genNode(t, i))
		}
		f := newFake(nodes...)
		for k := range rapid.IntRange(1, 4).Draw(t, "workloads") {
			w := workload(fmt.Sprint("w", k), genGroup(t, "g"))
			f.putWorkload(w)
			f.apply(Schedule(f, &api.Evaluation{ID: w.Name, Workload: w.Name}, Options{Seed: int64(k)}), false)
		}
		for _, n := range f.nodes {
			var live []*api.Allocation
			for _, a := range f.AllocsByNode(n.ID) {
				if !a.Terminal() {
					live = append(live, a)
				}
			}
			full := newNodeDetail(n)
			for _, a := range live {
				full.apply(a)
			}
			if full.conflicted {
				t.Fatalf("%s: plans conflict", n.ID)
			}
			var got nodeDetail
			full.cloneInto(&got)
			want := newNodeDetail(n)
			for _, a := range live {
				if rapid.Bool().Draw(t, "release") {
					got.release(a)
				} else {
					want.apply(a)
				}
			}
			for _, pair := range [][2]any{
				{got.coreTaken, want.coreTaken}, {got.numaFree, want.numaFree}, {got.numaMem, want.numaMem},
				{got.gpuWhole, want.gpuWhole}, {got.gpuMilli, want.gpuMilli},
			} {
				if fmt.Sprint(pair[0]) != fmt.Sprint(pair[1]) {
					t.Fatalf("%s: released %v, rebuilt %v", n.ID, pair[0], pair[1])
				}
			}
		}
	})
}
