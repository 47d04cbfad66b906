package scheduler

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sync"
	"testing"

	"github.com/strata-dev/strata/api"
)

// mixedCell is a small heterogeneous cell for whole-plan tests.
func mixedCell(n int) *fakeState {
	return newFake(nodesN(n, func(i int, b *nodeBuilder) {
		b.cpu(int64(8000+4000*(i%3))).mem(fmt.Sprintf("%dGi", 16+16*(i%2))).label("rack", fmt.Sprintf("r%d", i%5))
		b.numa(0, "", cpus(0, 4)...).numa(1, "", cpus(4, 8)...)
		if i%4 == 0 {
			b.gpu("0", "A100", 0).gpu("1", "V100", 1)
		}
	})...)
}

func mixedWorkload() *api.Workload {
	return workload("mix",
		taskGroup("web").replicas(30).cpu(500).mem("1Gi"),
		taskGroup("db").replicas(8).cpu(2000).mem("4Gi").exclusive().require("rack", "in", "r1", "r2"),
		taskGroup("ml").replicas(6).cpu(1000).gpus(1),
		taskGroup("infer").replicas(10).cpu(100).gpuMilli(250).models("A100").prefer(50, "rack", "=", "r0"),
	)
}

func planJSON(t *testing.T, p *api.Plan) string {
	t.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestDeterminism(t *testing.T) {
	run := func(seed int64) string {
		f := mixedCell(40)
		f.putWorkload(mixedWorkload())
		return planJSON(t, schedule(f, "mix", seed))
	}
	a, b, c := run(1), run(1), run(2)
	mustEqual(t, "same seed, same plan", a, b)
	mustEqual(t, "different seed, different plan", a != c, true)
}

func TestDeterminismUnderConcurrentWorkers(t *testing.T) {
	f := mixedCell(40)
	f.putWorkload(mixedWorkload())
	want := planJSON(t, schedule(f, "mix", 3))
	var wg sync.WaitGroup
	got := make([]string, 4)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b, _ := json.Marshal(schedule(f, "mix", 3))
			got[i] = string(b)
		}()
	}
	wg.Wait()
	for _, g := range got {
		mustEqual(t, "concurrent plan", g, want)
	}
}

func TestAllocationIDs(t *testing.T) {
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	f := mixedCell(40)
	f.putWorkload(mixedWorkload())
	seen := map[string]bool{}
	for _, seed := range []int64{1, 2} {
		for _, a := range planAllocs(schedule(f, "mix", seed)) {
			mustEqual(t, "uuid "+a.ID, uuid.MatchString(a.ID), true)
			mustEqual(t, "unique "+a.ID, seen[a.ID], false)
			seen[a.ID] = true
		}
	}
	x := planAllocs(Schedule(f, &api.Evaluation{ID: "e1", Workload: "mix"}, Options{Seed: 5}))[0].ID
	y := planAllocs(Schedule(f, &api.Evaluation{ID: "e2", Workload: "mix"}, Options{Seed: 5}))[0].ID
	mustEqual(t, "eval id salts ids", x != y, true)
}

func TestBinpackVersusSpread(t *testing.T) {
	for _, tt := range []struct {
		policy    string
		wantNodes int
	}{{api.PolicyBinpack, 1}, {api.PolicySpread, 4}} {
		t.Run(tt.policy, func(t *testing.T) {
			f := newFake(nodesN(4, nil)...)
			w := workload("w", taskGroup("g").replicas(4).cpu(500))
			w.SchedulingPolicy.Type = tt.policy
			f.putWorkload(w)
			mustEqual(t, "nodes used", len(schedule(f, "w", 1).Place), tt.wantNodes)
		})
	}
}

func TestSampleStillScansWholeCellBeforeFailing(t *testing.T) {
	// Only the last node (in any order) fits; a sample of 1 must find it.
	f := newFake(nodesN(30, func(i int, b *nodeBuilder) {
		if i != 17 {
			b.label("rack", "other")
		}
	})...)
	f.putWorkload(workload("w", taskGroup("g").replicas(2).cpu(1000).require("rack", "notin", "other")))
	plan := Schedule(f, &api.Evaluation{ID: "e", Workload: "w"}, Options{Seed: 1, FeasibleSample: 1})
	mustEqual(t, "placed on n017", len(plan.Place["n017"]), 2)
	mustEqual(t, "failures", len(plan.Failures), 0)
}

func TestSampleSize(t *testing.T) {
	tests := []struct {
		opt, nodes, want int
	}{{0, 10, 100}, {0, 10000, 500}, {7, 10000, 7}, {-1, 10000, 10000}, {-1, 0, 1}}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt), func(t *testing.T) {
			mustEqual(t, "sample", Options{FeasibleSample: tt.opt}.sampleSize(tt.nodes), tt.want)
		})
	}
}

func TestGroupsSeeEarlierGroupsPlacements(t *testing.T) {
	f := newFake(node("n1").cpu(4000).mem("8Gi"))
	f.putWorkload(workload("w", taskGroup("a").replicas(3).cpu(1000), taskGroup("b").replicas(2).cpu(1000)))
	plan := schedule(f, "w", 1)
	mustEqual(t, "placed", len(plan.Place["n1"]), 4)
	mustEqual(t, "failed group", plan.Failures[0].Group, "b")
	mustEqual(t, "missing", plan.Failures[0].Missing, 1)
	mustEqual(t, "summary", plan.Failures[0].Summary, "1 node: insufficient cpu")
}

// An update of a full node used to stop both old replicas and place the
// new ones in the freed room: nothing ran until they started. Now the
// replacement must fit beside the old copy, and when it does not, the old
// version keeps running and the failure says why.
func TestUpdateOnAFullNodeKeepsTheOldVersion(t *testing.T) {
	f := newFake(node("n1").cpu(2000).mem("8Gi"))
	deploy(t, f, workload("w", taskGroup("g").replicas(2).cpu(1000)))
	w2 := workload("w", taskGroup("g").replicas(2).cpu(1000).command("v2"))
	w2.Version = 2
	f.putWorkload(w2)
	plan := schedule(f, "w", 2)
	mustEqual(t, "stops", len(plan.Stop["n1"]), 0)
	mustEqual(t, "placed", len(plan.Place["n1"]), 0)
	mustEqual(t, "failure", len(plan.Failures), 1)
	mustEqual(t, "summary", plan.Failures[0].Summary, "1 node: insufficient cpu")
}
