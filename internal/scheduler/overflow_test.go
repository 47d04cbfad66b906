package scheduler

import (
	"fmt"
	"math"
	"math/big"
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-dev/strata/api"
)

// hugeTasks is a group of n tasks, each asking for r: with r near int64's
// edge, the group's sum is where wrapping would hide.
func hugeTasks(name string, n int, r api.Resources) *groupBuilder {
	g := taskGroup(name)
	g.g.Tasks[0].Resources = r
	for i := 1; i < n; i++ {
		t := *g.g.Tasks[0]
		t.Name = fmt.Sprintf("t%d", i)
		g.g.Tasks = append(g.g.Tasks, &t)
	}
	return g
}

// Issue 7, defect 3: two tasks of math.MaxInt64 millicores and bytes summed
// to -2, fit a full node and lowered its allocated CPU.
func TestOverflowingRequestDoesNotFit(t *testing.T) {
	full := node("n1").cpu(4000).mem("8Gi")
	f := newFake(full)
	f.putWorkload(workload("filler", taskGroup("g").cpu(4000).mem("8Gi")))
	f.apply(schedule(f, "filler", 1), false)
	if got := f.Node("n1").Allocated.CPUMilli; got != 4000 {
		t.Fatalf("filler left allocated cpu %d, want 4000", got)
	}
	f.putWorkload(workload("huge", hugeTasks("g", 2, api.Resources{CPUMilli: math.MaxInt64, MemoryBytes: math.MaxInt64})))
	plan := schedule(f, "huge", 2)
	if n := len(planAllocs(plan)); n != 0 {
		t.Fatalf("the overflowing group was placed %d times: %+v", n, planAllocs(plan)[0].Resources)
	}
}

func TestCheckNodeRefusesNegativeAndOverflowingSums(t *testing.T) {
	plain := func(id string, cpu int64) *api.Allocation {
		return runningOn(id, "n1", api.Resources{CPUMilli: cpu, MemoryBytes: 1}, api.Assignment{NUMANode: -1})
	}
	small := node("n1").cpu(4000).mem("8Gi").n
	endless := node("n1").cpu(math.MaxInt64).mem("8Gi").n
	half := int64(math.MaxInt64/2 + 1)
	tests := []struct {
		name     string
		node     *api.Node
		existing []*api.Allocation
		place    []*api.Allocation
		want     string
	}{
		{"negative request on a full node", small, []*api.Allocation{plain("a", 4000)}, []*api.Allocation{plain("b", -2)}, "alloc b: negative cpu request"},
		{"existing sum wraps", endless, []*api.Allocation{plain("a", half), plain("b", half)}, []*api.Allocation{plain("c", 1)}, "resource sum overflows"},
		{"placements wrap", endless, nil, []*api.Allocation{plain("a", half), plain("b", half)}, "resource sum overflows"},
		{"largest request on the largest node", endless, nil, []*api.Allocation{plain("a", math.MaxInt64)}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, reason := CheckNode(tt.node, tt.existing, nil, tt.place)
			if ok != (tt.want == "") || reason != tt.want {
				t.Fatalf("CheckNode = %v, %q; want %q", ok, reason, tt.want)
			}
		})
	}
}

// extremeQuantity draws a request or capacity from ordinary sizes, the API
// maxima and int64's edges.
func extremeQuantity(t *rapid.T, label string, ordinary int64) int64 {
	return rapid.OneOf(
		rapid.Int64Range(1, ordinary),
		rapid.SampledFrom([]int64{math.MaxInt64, math.MaxInt64 - 1, math.MaxInt64 / 2, math.MaxInt64/2 + 1, math.MaxInt64 / 3, 1 << 50, 1_000_000_000}),
	).Draw(t, label)
}

// TestPropertyNeverOvercommitsAtExtremes is TestPropertyNeverOvercommits
// with quantities at int64's edges: groups of several tasks whose sums
// overflow, nodes whose capacity is math.MaxInt64. Usage is summed exactly
// (math/big), so a wrapped sum cannot pass for a small one.
func TestPropertyNeverOvercommitsAtExtremes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var nodes []*nodeBuilder
		for i := range rapid.IntRange(1, 4).Draw(t, "nodes") {
			nodes = append(nodes, node(fmt.Sprintf("n%02d", i)).
				cpu(extremeQuantity(t, "cpu", 16000)).
				mem(fmt.Sprint(extremeQuantity(t, "mem", 64<<30))))
		}
		f := newFake(nodes...)
		for step := range rapid.IntRange(1, 8).Draw(t, "steps") {
			name := rapid.SampledFrom([]string{"a", "b", "c"}).Draw(t, "workload")
			if rapid.IntRange(0, 3).Draw(t, "action") == 0 && len(f.allocs) > 0 {
				a := f.allocs[rapid.IntRange(0, len(f.allocs)-1).Draw(t, "alloc")]
				if !a.Terminal() {
					f.setClient(a.ID, api.AllocFailed)
				}
			} else {
				r := api.Resources{CPUMilli: extremeQuantity(t, "wantCPU", 4000), MemoryBytes: extremeQuantity(t, "wantMem", 8<<30)}
				g := hugeTasks("g", rapid.IntRange(1, 3).Draw(t, "tasks"), r).replicas(rapid.IntRange(0, 4).Draw(t, "replicas"))
				w := workload(name, g)
				w.Priority = rapid.IntRange(0, 100).Draw(t, "priority")
				if old := f.Workload("", name); old != nil {
					w.Version = old.Version + 1
				}
				f.putWorkload(w)
			}
			plan := Schedule(f, &api.Evaluation{ID: fmt.Sprint("e", step), Workload: name}, Options{Seed: int64(step)})
			checkPlan(t, f, plan)
			f.apply(plan, rapid.Bool().Draw(t, "finishStops"))
			checkExactUsage(t, f)
		}
	})
}

// checkExactUsage sums each node's live allocations with math/big and
// compares the exact sums with the node's capacity.
func checkExactUsage(t fataler, f *fakeState) {
	for _, n := range f.nodes {
		cpu, mem := new(big.Int), new(big.Int)
		for _, a := range f.AllocsByNode(n.ID) {
			if a.Terminal() {
				continue
			}
			if a.Resources.Negative() != "" {
				t.Fatalf("node %s holds %s with negative resources %+v", n.ID, a.ID, a.Resources)
			}
			cpu.Add(cpu, big.NewInt(a.Resources.CPUMilli))
			mem.Add(mem, big.NewInt(a.Resources.MemoryBytes))
		}
		if cpu.Cmp(big.NewInt(n.Capacity.CPUMilli)) > 0 || mem.Cmp(big.NewInt(n.Capacity.MemoryBytes)) > 0 {
			t.Fatalf("node %s overcommitted: cpu %s of %d, memory %s of %d", n.ID, cpu, n.Capacity.CPUMilli, mem, n.Capacity.MemoryBytes)
		}
	}
}

// An exclusive-cores request near int64's edge was rounded up to whole
// cores with (milli+999)/1000, which wrapped and charged one core.
func TestExclusiveCoresNearInt64DoNotShrink(t *testing.T) {
	f := newFake(gpuBox())
	f.putWorkload(workload("w", taskGroup("g").cpu(math.MaxInt64-500).mem("1Gi").exclusive()))
	if placed := planAllocs(schedule(f, "w", 1)); len(placed) != 0 {
		t.Fatalf("placed %d, charged %d millicores", len(placed), placed[0].Resources.CPUMilli)
	}
}
