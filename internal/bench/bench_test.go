package bench

import (
	"reflect"
	"testing"

	"github.com/strata-dev/strata/api"
)

func TestGenerateDeterministic(t *testing.T) {
	a, b := GenerateNodes(500, 7), GenerateNodes(500, 7)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed gave different cells")
	}
	if reflect.DeepEqual(a, GenerateNodes(500, 8)) {
		t.Fatal("different seeds gave the same cell")
	}
	wa, wb := GenerateWorkloads(5000, 100, PolicyMixed, true, 7), GenerateWorkloads(5000, 100, PolicyMixed, true, 7)
	if !reflect.DeepEqual(wa, wb) {
		t.Fatal("same seed gave different workloads")
	}
	total := 0
	for _, w := range wa {
		for _, g := range w.Groups {
			total += g.Replicas
		}
	}
	if total != 5000 || len(wa) != 50 {
		t.Fatalf("got %d replicas in %d workloads, want 5000 in 50", total, len(wa))
	}
	gpus, keys := 0, map[string]bool{}
	for _, n := range a {
		gpus += len(n.GPUs)
		for k := range n.Labels {
			keys[k] = true
		}
		if len(n.NUMA) != 2 {
			t.Fatalf("%s: %d NUMA nodes", n.ID, len(n.NUMA))
		}
	}
	for _, k := range []string{api.LabelRegion, api.LabelZone, api.LabelDatacenter, api.LabelRow, api.LabelRack, api.LabelPowerZone} {
		if !keys[k] {
			t.Errorf("no node has label %s", k)
		}
	}
	if gpus == 0 {
		t.Error("no GPU nodes in 500")
	}
}

// TestSmallCell places a small cell beyond its capacity and checks that no
// node is overcommitted and that every replica is placed or reported.
func TestSmallCell(t *testing.T) {
	for _, pol := range []string{PolicyBinpack, PolicySpread, PolicyMixed} {
		t.Run(pol, func(t *testing.T) {
			res, err := Run(Config{Nodes: 100, Tasks: 6000, PerWorkload: 200, Seed: 3, Policy: pol})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Overcommitted) > 0 {
				t.Fatalf("%d problems, first: %s", len(res.Overcommitted), res.Overcommitted[0])
			}
			if res.Unaccounted != 0 {
				t.Fatalf("%d replicas neither placed nor reported failed", res.Unaccounted)
			}
			if res.Placed+res.Failed != res.Tasks {
				t.Fatalf("placed %d + failed %d != %d", res.Placed, res.Failed, res.Tasks)
			}
			if res.Placed == 0 || res.Failed == 0 {
				t.Fatalf("placed %d, failed %d: want an overfull cell with both", res.Placed, res.Failed)
			}
			if len(res.FailureReasons) == 0 {
				t.Fatal("failures without reasons")
			}
			if len(res.GangViolations) > 0 || len(res.GangsBrokenByPreemption) > 0 {
				t.Fatalf("partial gangs: placed %v, left by preemption %v", res.GangViolations, res.GangsBrokenByPreemption)
			}
			if res.Gangs == 0 {
				t.Fatal("no gangs in the mix")
			}
			if res.RejectedNodes != 0 {
				t.Fatalf("CheckNode rejected %d plan parts on a current snapshot", res.RejectedNodes)
			}
			if res.PeakRSSBytes <= 0 {
				t.Errorf("peak RSS %d", res.PeakRSSBytes)
			}
		})
	}
}

func TestRunDeterministic(t *testing.T) {
	cfg := Config{Nodes: 100, Tasks: 1500, PerWorkload: 100, Seed: 11}
	a, _ := Run(cfg)
	b, _ := Run(cfg)
	if a.Placed != b.Placed || a.Failed != b.Failed || !reflect.DeepEqual(a.FailureReasons, b.FailureReasons) {
		t.Fatalf("two runs differ: %d/%d %v vs %d/%d %v", a.Placed, a.Failed, a.FailureReasons, b.Placed, b.Failed, b.FailureReasons)
	}
}

func TestApplyRejectsOvercommit(t *testing.T) {
	st := NewState(GenerateNodes(1, 1))
	n := st.Nodes()[0]
	mk := func(id string, cpu int64) *api.Allocation {
		return &api.Allocation{ID: id, Workload: "w", Group: "g", NodeID: n.ID, Resources: api.Resources{CPUMilli: cpu},
			Assignment: api.Assignment{NUMANode: -1}, DesiredStatus: api.DesiredRun, ClientStatus: api.AllocPending}
	}
	if r := st.Apply(&api.Plan{Place: map[string][]*api.Allocation{n.ID: {mk("a", n.Capacity.CPUMilli)}}}); r.Placed != 1 {
		t.Fatalf("first plan: %+v", r)
	}
	r := st.Apply(&api.Plan{Place: map[string][]*api.Allocation{n.ID: {mk("b", 1)}}})
	if r.Placed != 0 || len(r.Rejected) != 1 {
		t.Fatalf("overcommitting plan committed: %+v", r)
	}
	st.Apply(&api.Plan{Stop: map[string][]api.StopRequest{n.ID: {{AllocID: "a", Reason: "test"}}}})
	if !n.Allocated.IsZero() {
		t.Fatalf("after stop Allocated = %+v", n.Allocated)
	}
	if p := st.Verify(); len(p) > 0 {
		t.Fatal(p)
	}
}

// BenchmarkCell10kNodes100kTasks places the full mix, gangs included.
func BenchmarkCell10kNodes100kTasks(b *testing.B) { benchCell(b, 10_000, 100_000, true) }

// BenchmarkCell10kNodes100kTasksNoGangs is the same cell with the training
// jobs as plain groups: the difference is the cost of gang placement.
func BenchmarkCell10kNodes100kTasksNoGangs(b *testing.B) { benchCell(b, 10_000, 100_000, false) }

// BenchmarkCell100kNodes1MTasks is the full-scale cell with the
// full mix, gangs included; run it with -benchtime 1x.
func BenchmarkCell100kNodes1MTasks(b *testing.B) {
	if testing.Short() {
		b.Skip("full-scale cell")
	}
	benchCell(b, 100_000, 1_000_000, true)
}

// BenchmarkCell100kNodes1MTasksNoGangs is the full-scale cell
// without gangs; run it with -benchtime 1x.
func BenchmarkCell100kNodes1MTasksNoGangs(b *testing.B) {
	if testing.Short() {
		b.Skip("full-scale cell")
	}
	benchCell(b, 100_000, 1_000_000, false)
}

func benchCell(b *testing.B, nodes, tasks int, gangs bool) {
	var last *Result
	var wall float64
	placed := 0
	for i := range b.N {
		res, err := Run(Config{Nodes: nodes, Tasks: tasks, Seed: int64(i + 1), Policy: PolicyBinpack, NoGangs: !gangs})
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Overcommitted) > 0 || res.Unaccounted != 0 || len(res.GangViolations)+len(res.GangsBrokenByPreemption) > 0 {
			b.Fatalf("overcommit %v, unaccounted %d, partial gangs %v %v", res.Overcommitted, res.Unaccounted, res.GangViolations, res.GangsBrokenByPreemption)
		}
		placed += res.Placements
		wall += res.WallSeconds
		last = res
	}
	b.ReportMetric(float64(placed)/wall, "placements/s")
	b.ReportMetric(float64(placed)/float64(b.N), "placed/op")
	b.ReportMetric(float64(last.PeakRSSBytes)/(1<<20), "peakRSS-MiB")
}
