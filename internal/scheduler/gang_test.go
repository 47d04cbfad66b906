package scheduler

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"pgregory.net/rapid"
)

// rackCell has four-core nodes: rack r0 has 2 nodes and r1 has 3 (zone
// z0), r2 has 1 (zone z1). At one core a member, r0 holds 8, r1 12, r2 4.
func rackCell() *fakeState {
	racks := []string{"r0", "r0", "r1", "r1", "r1", "r2"}
	return newFake(nodesN(len(racks), func(i int, b *nodeBuilder) {
		b.label("rack", racks[i]).label("zone", map[bool]string{true: "z1", false: "z0"}[racks[i] == "r2"])
	})...)
}

// placedLabels counts a plan's placements by the value of label key.
func placedLabels(f *fakeState, p *api.Plan, key string) map[string]int {
	out := map[string]int{}
	for nodeID, as := range p.Place {
		out[f.Node(nodeID).Labels[key]] += len(as)
	}
	return out
}

func TestGangPrefersTightestDomain(t *testing.T) {
	tests := []struct {
		name  string
		size  int
		topo  string
		key   string
		where string // the only label value the gang may land in
	}{
		{"fits one rack", 10, "rack", "rack", "r1"},
		{"small gang stays in one rack", 3, "rack", "rack", ""},
		{"wider zone when no rack holds it", 14, "rack", "zone", "z0"},
		{"topology zone", 18, "zone", "zone", "z0"},
	}
	for _, tt := range tests {
		for seed := int64(1); seed <= 5; seed++ {
			t.Run(fmt.Sprint(tt.name, "/", seed), func(t *testing.T) {
				f := rackCell()
				f.putWorkload(workload("g", taskGroup("train").replicas(tt.size).cpu(1000).gang(0, tt.topo)))
				plan := schedule(f, "g", seed)
				mustEqual(t, "failures", len(plan.Failures), 0)
				got := placedLabels(f, plan, tt.key)
				mustEqual(t, "domains used", len(got), 1)
				if tt.where != "" {
					mustEqual(t, "placed in "+tt.where, got[tt.where], tt.size)
				}
			})
		}
	}
}

func TestGangAllOrNothing(t *testing.T) {
	f := rackCell()
	w := workload("g", taskGroup("train").replicas(25).cpu(1000).gang(0, "rack"))
	w.SubmitTime = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	w.Groups[0].Gang.Timeout = 5 * time.Minute
	f.putWorkload(w)
	plan := Schedule(f, &api.Evaluation{ID: "e", Workload: "g"}, Options{Seed: 1, Now: w.SubmitTime.Add(10 * time.Minute)})
	mustEqual(t, "placed", len(plan.Place), 0)
	mustEqual(t, "failures", len(plan.Failures), 1)
	fl := plan.Failures[0]
	mustEqual(t, "missing", fl.Missing, 25)
	mustEqual(t, "summary", fl.Summary, "gang of 25 does not fit: best rack holds 12, best zone holds 20, the whole cell holds 24"+
		"; 6 nodes: insufficient cpu; waiting since 2026-01-02T03:04:05Z, past its 5m0s timeout")
}

func TestGangReasonsAfterRollback(t *testing.T) {
	// Rolled-back trials must leave the cell as it was: a later group
	// still gets every node.
	f := rackCell()
	f.putWorkload(workload("g",
		taskGroup("train").replicas(30).cpu(1000).gang(0, "rack"),
		taskGroup("web").replicas(24).cpu(1000)))
	plan := schedule(f, "g", 3)
	mustEqual(t, "failures", len(plan.Failures), 1)
	mustEqual(t, "failed group", plan.Failures[0].Group, "train")
	mustEqual(t, "web placed on the whole cell", len(planAllocs(plan)), 24)
	if !strings.Contains(plan.Failures[0].Summary, "the whole cell holds 24; 6 nodes: insufficient cpu") {
		t.Fatalf("summary = %q", plan.Failures[0].Summary)
	}
}

func TestGangMinMember(t *testing.T) {
	f := newFake(nodesN(1, nil)...) // holds 4
	f.putWorkload(workload("g", taskGroup("train").replicas(6).cpu(1000).gang(3, "")))
	plan := schedule(f, "g", 1)
	mustEqual(t, "placed", len(planAllocs(plan)), 4)
	mustEqual(t, "missing extras", plan.Failures[0].Missing, 2)

	f = newFake(nodesN(1, nil)...)
	f.putWorkload(workload("g", taskGroup("train").replicas(6).cpu(1000).gang(5, "")))
	plan = schedule(f, "g", 1)
	mustEqual(t, "placed below minMember", len(planAllocs(plan)), 0)
	mustEqual(t, "missing", plan.Failures[0].Missing, 6)
	mustEqual(t, "summary", plan.Failures[0].Summary, "gang of 5 does not fit: the whole cell holds 4; 1 node: insufficient cpu")
}

func TestGangRunningMembersCount(t *testing.T) {
	f := newFake(nodesN(2, nil)...)
	placed := deploy(t, f, workload("g", taskGroup("train").replicas(4).cpu(1000).gang(0, "")))
	f.setClient(placed[0].ID, api.AllocFailed)
	plan := schedule(f, "g", 2)
	mustEqual(t, "one replacement", len(planAllocs(plan)), 1)
	mustEqual(t, "failures", len(plan.Failures), 0)
}

func TestGangLevels(t *testing.T) {
	mustEqual(t, "rack", join(gangLevels("rack")), "rack,row,datacenter,zone,region")
	mustEqual(t, "zone", join(gangLevels("zone")), "zone,region")
	mustEqual(t, "switch", join(gangLevels("switch")), "switch,rack,row,datacenter,zone,region")
	mustEqual(t, "none", join(gangLevels("")), "")
}

// TestPropertyGangAllOrNothing: on random cells, with other workloads
// already running, a gang group's plan places nothing of it or enough to
// bring the gang to its size, and never overcommits.
func TestPropertyGangAllOrNothing(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var nodes []*nodeBuilder
		for i := range rapid.IntRange(1, 10).Draw(t, "nodes") {
			nodes = append(nodes, genNode(t, i).label("zone", fmt.Sprintf("z%d", rapid.IntRange(0, 1).Draw(t, "zone"))))
		}
		f := newFake(nodes...)
		for k := range rapid.IntRange(0, 2).Draw(t, "others") {
			w := workload(fmt.Sprint("bg", k), genGroup(t, "bg"))
			w.Priority = rapid.IntRange(0, 100).Draw(t, "bgPriority")
			f.putWorkload(w)
			plan := Schedule(f, &api.Evaluation{ID: w.Name, Workload: w.Name}, Options{Seed: int64(k)})
			checkPlan(t, f, plan)
			f.apply(plan, false)
		}
		g := genGroup(t, "gang")
		g.replicas(rapid.IntRange(1, 12).Draw(t, "gangReplicas"))
		g.gang(rapid.IntRange(0, g.g.Replicas).Draw(t, "minMember"), rapid.SampledFrom([]string{"", "rack", "zone", "node"}).Draw(t, "topology"))
		w := workload("gang", g)
		w.Priority = rapid.IntRange(0, 100).Draw(t, "priority")
		f.putWorkload(w)
		for step := range rapid.IntRange(1, 3).Draw(t, "steps") {
			plan := Schedule(f, &api.Evaluation{ID: fmt.Sprint("e", step), Workload: "gang"}, Options{Seed: int64(step)})
			checkPlan(t, f, plan)
			kept := 0
			for _, a := range f.AllocsByWorkload("", "gang") {
				if live(a) {
					kept++
				}
			}
			placed := len(planAllocs(plan))
			if placed > 0 && placed+kept < gangSize(g.g) {
				t.Fatalf("partial gang: placed %d with %d running, gang of %d", placed, kept, gangSize(g.g))
			}
			if placed == 0 && plan.Preemptions > 0 {
				t.Fatalf("a gang that placed nothing preempted %d allocations", plan.Preemptions)
			}
			if len(plan.Failures) > 0 && placed == 0 && kept < gangSize(g.g) && !strings.HasPrefix(plan.Failures[0].Summary, "gang of") {
				t.Fatalf("gang failure without a gang summary: %q", plan.Failures[0].Summary)
			}
			f.apply(plan, false)
			checkState(t, f)
			if len(f.allocs) > 0 { // a member fails between evaluations
				a := f.allocs[rapid.IntRange(0, len(f.allocs)-1).Draw(t, "fail")]
				if !a.Terminal() {
					f.setClient(a.ID, api.AllocFailed)
				}
			}
		}
	})
}

func TestGangDeterminism(t *testing.T) {
	run := func(seed int64) string {
		f := rackCell()
		running(f, "low", "n002", "batch", 10, 4000)
		f.putWorkload(workload("g", taskGroup("train").replicas(12).cpu(1000).gang(0, "rack"), taskGroup("ps").replicas(3).cpu(1000).gang(0, "zone")))
		return planJSON(t, schedule(f, "g", seed))
	}
	a := run(7)
	mustEqual(t, "same seed, same plan", run(7), a)
	// No rack holds 12 with "low" running, zone z0 does: a wider domain is
	// preferred to evicting anyone for locality.
	mustEqual(t, "no preemption for locality", strings.Contains(a, "preemptions"), false)
}
