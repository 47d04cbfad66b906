package bench

import (
	"fmt"
	"reflect"
	"strings"
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
	wa, wb := GenerateWorkloads(5000, 100, PolicyMixed, true, true, 7), GenerateWorkloads(5000, 100, PolicyMixed, true, true, 7)
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
			if len(res.RelationViolations) > 0 {
				t.Fatalf("%d hard relation rules broken, first: %s", len(res.RelationViolations), res.RelationViolations[0])
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

// TestMixHasRelations: the mix declares every kind of relation rule, the
// cell has dataset labels for data locality to find, and --no-relations
// gives the mix and the cell as they were before (no rule, no label).
func TestMixHasRelations(t *testing.T) {
	kinds := map[string]bool{}
	for _, w := range GenerateWorkloads(50_000, 1000, PolicyBinpack, true, true, 1) {
		for _, g := range w.Groups {
			pl := g.Placement
			for _, r := range pl.Spread {
				kinds["spread "+r.Mode] = true
			}
			for _, r := range pl.AntiAffinity {
				kinds["anti-affinity "+r.Mode] = true
			}
			for _, r := range pl.Affinity {
				kinds["affinity "+r.Mode] = true
			}
			if len(pl.CommunicatesWith) > 0 {
				kinds["peers"] = true
			}
			if len(pl.DataLocality) > 0 {
				kinds["data"] = true
			}
		}
	}
	for _, k := range []string{"spread hard", "spread soft", "anti-affinity hard", "affinity soft", "peers", "data"} {
		if !kinds[k] {
			t.Errorf("no %s rule in the mix (%v)", k, kinds)
		}
	}
	for _, w := range GenerateWorkloads(50_000, 1000, PolicyBinpack, true, false, 1) {
		for _, g := range w.Groups {
			pl := g.Placement
			if len(pl.Spread)+len(pl.Affinity)+len(pl.AntiAffinity)+len(pl.CommunicatesWith)+len(pl.DataLocality) > 0 {
				t.Fatalf("%s: relation rules without relations: %+v", w.Name, pl)
			}
		}
	}
	nodes := GenerateNodes(2000, 1)
	LabelDatasets(nodes, 1)
	labelled := 0
	for _, n := range nodes {
		for k := range n.Labels {
			if strings.HasPrefix(k, api.DatasetLabelPrefix) {
				labelled++
				if len(n.GPUs) == 0 {
					t.Fatalf("%s: dataset label on a node without GPUs", n.ID)
				}
			}
		}
	}
	if labelled == 0 {
		t.Fatal("no node holds a dataset")
	}
}

// TestCheckRelationsFindsViolations: the end-of-run check reports a hard
// self anti-affinity and a hard spread that a plan broke, and skips the
// spread of a group that lost replicas to preemption.
func TestCheckRelationsFindsViolations(t *testing.T) {
	st := NewState(GenerateNodes(80, 1)) // two racks of 40, one zone
	nodes := st.Nodes()
	w := &api.Workload{Name: "w", Groups: []*api.TaskGroup{
		{Name: "anti", Replicas: 2, Placement: api.Placement{AntiAffinity: []api.AffinityRule{{Key: api.LabelNode, Mode: api.ModeHard}}}},
		{Name: "spread", Replicas: 3, Placement: api.Placement{Spread: []api.SpreadRule{{Key: api.LabelRack, MaxSkew: 1, Mode: api.ModeHard}}}},
	}}
	st.PutWorkload(w)
	k := 0
	put := func(group string, node int) *api.Allocation {
		k++
		a := &api.Allocation{ID: fmt.Sprint("a", k), Workload: "w", Group: group, NodeID: nodes[node].ID,
			Resources: api.Resources{CPUMilli: 100}, Assignment: api.Assignment{NUMANode: -1},
			DesiredStatus: api.DesiredRun, ClientStatus: api.AllocRunning}
		st.put(int32(node), a)
		return a
	}
	put("anti", 0)
	put("anti", 0) // two on one node
	put("spread", 0)
	put("spread", 1)
	put("spread", 2) // three in the first rack, none in the second
	got, unchecked := checkRelations(st, []*api.Workload{w})
	if len(got) != 2 || unchecked != 0 {
		t.Fatalf("got %d violations, %d unchecked, want 2, 0: %v", len(got), unchecked, got)
	}
	if !strings.Contains(got[0], "anti-affinity over node") || !strings.Contains(got[1], "skew 3 > maxSkew 1") {
		t.Fatalf("violations: %v", got)
	}
	// A preempted replica excuses the skew, not the anti-affinity.
	victim := put("spread", 3)
	st.stop(api.StopRequest{AllocID: victim.ID, Reason: "preempted", PreemptedBy: "x"}, &ApplyResult{})
	got, unchecked = checkRelations(st, []*api.Workload{w})
	if len(got) != 1 || unchecked != 1 {
		t.Fatalf("after preemption: %d violations, %d unchecked, want 1, 1: %v", len(got), unchecked, got)
	}
}

// TestRelationsHold places a cell large enough for the mix's hard rules
// (every cache and db replica on a node of its own) and checks every hard
// spread and self anti-affinity at the end.
func TestRelationsHold(t *testing.T) {
	res, err := Run(Config{Nodes: 2000, Tasks: 20000, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.RelationViolations) > 0 {
		t.Fatalf("%d hard relation rules broken, first: %s", len(res.RelationViolations), res.RelationViolations[0])
	}
	if res.SpreadUnchecked != 0 {
		t.Fatalf("%d spread groups not checked", res.SpreadUnchecked)
	}
	if len(res.Overcommitted) > 0 || res.Unaccounted != 0 {
		t.Fatalf("overcommit %v, unaccounted %d", res.Overcommitted, res.Unaccounted)
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
		if len(res.Overcommitted) > 0 || res.Unaccounted != 0 || len(res.GangViolations)+len(res.GangsBrokenByPreemption) > 0 || len(res.RelationViolations) > 0 {
			b.Fatalf("overcommit %v, unaccounted %d, partial gangs %v %v, relations %v", res.Overcommitted, res.Unaccounted, res.GangViolations, res.GangsBrokenByPreemption, res.RelationViolations)
		}
		placed += res.Placements
		wall += res.WallSeconds
		last = res
	}
	b.ReportMetric(float64(placed)/wall, "placements/s")
	b.ReportMetric(float64(placed)/float64(b.N), "placed/op")
	b.ReportMetric(float64(last.PeakRSSBytes)/(1<<20), "peakRSS-MiB")
}
