package fsm

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/strata-dev/strata/api"
)

// genPlan draws a committed plan: placements of plain and gang groups on a
// few nodes, some with their own hardware assignment, stops of existing
// allocations (some preempted by a placement, some of a victim gang), and
// one evaluation per victim workload. existing describes the stopped
// allocations as the state would.
func genPlan(t *rapid.T) (*ApplyPlan, map[string]StoppedAlloc) {
	nodes := rapid.IntRange(1, 12).Draw(t, "nodes")
	nodeID := func(i int) string { return fmt.Sprintf("node-%02d", i) }
	now := time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)
	cmd := &ApplyPlan{Time: now, Eval: &api.Evaluation{ID: "eval", Workload: "w", Status: api.EvalComplete}}
	groups := rapid.IntRange(1, 4).Draw(t, "groups")
	seq := 0
	for g := range groups {
		tg := &api.TaskGroup{Name: fmt.Sprintf("g%d", g), Replicas: 10,
			Tasks: []*api.Task{{Name: "t", Driver: "mock", Command: []string{"run", fmt.Sprint(g)}}}}
		if rapid.Bool().Draw(t, "gang") {
			tg.Gang = &api.GangPolicy{MinMember: 2}
		}
		for i := range rapid.IntRange(0, 15).Draw(t, "replicas") {
			n := rapid.IntRange(0, nodes-1).Draw(t, "node")
			a := &api.Allocation{ID: fmt.Sprintf("alloc-%03d", seq), Workload: "w", Group: tg.Name, Index: i,
				NodeID: nodeID(n), NodeName: fmt.Sprint("n", n), WorkloadVersion: 3, Priority: 80, TaskGroup: tg,
				Resources: api.Resources{CPUMilli: 100}, Assignment: api.Assignment{NUMANode: -1},
				DesiredStatus: api.DesiredRun, ClientStatus: api.AllocPending, CreateTime: now}
			if rapid.IntRange(0, 4).Draw(t, "pinned") == 0 {
				a.Assignment = api.Assignment{NUMANode: 1, CPUs: []int{seq % 8}}
			}
			if rapid.Bool().Draw(t, "replaces") {
				a.PreviousAlloc = fmt.Sprintf("old-%03d", seq)
			}
			seq++
			cmd.Place = append(cmd.Place, a)
		}
	}
	existing := map[string]StoppedAlloc{}
	victimWorkloads := map[string]bool{}
	for i := range rapid.IntRange(0, 20).Draw(t, "stops") {
		st := api.StopRequest{AllocID: fmt.Sprintf("victim-%03d", i), Reason: "stopped"}
		v := StoppedAlloc{Workload: fmt.Sprintf("low-%d", rapid.IntRange(0, 2).Draw(t, "victimWorkload")),
			Node: nodeID(rapid.IntRange(0, nodes-1).Draw(t, "victimNode"))}
		if rapid.Bool().Draw(t, "victimGang") {
			v.Gang = GangKey(v.Workload, &api.TaskGroup{Name: "gang", Gang: &api.GangPolicy{}})
		}
		if len(cmd.Place) > 0 && rapid.Bool().Draw(t, "preempted") {
			st.PreemptedBy = cmd.Place[rapid.IntRange(0, len(cmd.Place)-1).Draw(t, "preemptor")].ID
			st.Reason = "preempted by " + st.PreemptedBy
			victimWorkloads[v.Workload] = true
		}
		if rapid.IntRange(0, 9).Draw(t, "gone") == 0 {
			v = StoppedAlloc{} // the state no longer knows it
		}
		existing[st.AllocID] = v
		cmd.Stop = append(cmd.Stop, st)
	}
	for _, w := range slices.Sorted(func(yield func(string) bool) {
		for w := range victimWorkloads {
			if !yield(w) {
				return
			}
		}
	}) {
		cmd.Evals = append(cmd.Evals, &api.Evaluation{ID: "eval-" + w, Workload: w, Status: api.EvalPending})
	}
	return cmd, existing
}

// TestPropertyPlanPartsKeepUnitsWhole: a plan written in parts decodes to
// the same plan; every gang, every node's placements and stops, every
// preemptor with its victims and every victim gang lie in one entry; a
// victim's workload is re-evaluated in the entry that evicts it; the
// evaluation's outcome is in the last entry only; and an entry is over
// the limit only when it holds one unit that cannot be cut.
func TestPropertyPlanPartsKeepUnitsWhole(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cmd, existing := genPlan(t)
		limit := rapid.IntRange(200, 4000).Draw(t, "limit")
		entries, err := PlanParts(cmd, limit, func(id string) StoppedAlloc { return existing[id] })
		if err != nil {
			t.Fatal(err)
		}
		partOfAlloc := map[string]int{}
		partOfStop := map[string]int{}
		partOfEval := map[string]int{}
		var place []*api.Allocation
		var stops []api.StopRequest
		for i, e := range entries {
			if Type(e[0]) != planPartValue {
				t.Fatalf("entry %d is a %s", i, Commands.Name(Type(e[0])))
			}
			_, body, err := Commands.Decode(e)
			if err != nil {
				t.Fatal(err)
			}
			p := body.(*ApplyPlan)
			if p.Part != i+1 || p.Parts != len(entries) {
				t.Fatalf("entry %d says part %d of %d", i, p.Part, p.Parts)
			}
			if (p.Eval != nil) != (i == len(entries)-1) {
				t.Fatalf("entry %d of %d carries the evaluation's outcome: %v", i+1, len(entries), p.Eval != nil)
			}
			for _, a := range p.Place {
				partOfAlloc[a.ID] = i
			}
			for _, s := range p.Stop {
				partOfStop[s.AllocID] = i
			}
			for _, ev := range p.Evals {
				if _, dup := partOfEval[ev.ID]; dup {
					t.Fatalf("evaluation %s written twice", ev.ID)
				}
				partOfEval[ev.ID] = i
			}
			place = append(place, p.Place...)
			stops = append(stops, p.Stop...)
			if len(e) > limit && unitsIn(p, existing) > 1 {
				t.Fatalf("entry %d is %d bytes (limit %d) and holds %d units", i, len(e), limit, unitsIn(p, existing))
			}
		}
		// Lossless.
		sortAllocs := func(as []*api.Allocation) {
			sort.Slice(as, func(i, j int) bool { return as[i].ID < as[j].ID })
		}
		want := slices.Clone(cmd.Place)
		sortAllocs(want)
		sortAllocs(place)
		if len(place) != len(want) {
			t.Fatalf("decoded %d placements, want %d", len(place), len(want))
		}
		for i := range want {
			if !reflect.DeepEqual(place[i], want[i]) {
				a, _ := json.Marshal(place[i])
				b, _ := json.Marshal(want[i])
				t.Fatalf("placement decoded as\n%s\nwant\n%s", a, b)
			}
		}
		if len(stops) != len(cmd.Stop) || len(partOfEval) != len(cmd.Evals) {
			t.Fatalf("decoded %d stops and %d evaluations, want %d and %d", len(stops), len(partOfEval), len(cmd.Stop), len(cmd.Evals))
		}
		// Units whole.
		gangPart := map[string]int{}
		samePart := func(what, key string, part int) {
			if p, ok := gangPart[key]; ok && p != part {
				t.Fatalf("%s split over entries %d and %d", what, p, part)
			}
			gangPart[key] = part
		}
		for _, a := range cmd.Place {
			samePart("node "+a.NodeID, "node\x00"+a.NodeID, partOfAlloc[a.ID])
			if g := GangKey(a.Workload, a.TaskGroup); g != "" {
				samePart("gang "+a.Group, g, partOfAlloc[a.ID])
			}
		}
		for _, s := range cmd.Stop {
			part := partOfStop[s.AllocID]
			v := existing[s.AllocID]
			if v.Node != "" {
				samePart("node "+v.Node, "node\x00"+v.Node, part)
			}
			if v.Gang != "" {
				samePart("victim gang", v.Gang, part)
			}
			if s.PreemptedBy != "" && partOfAlloc[s.PreemptedBy] != part {
				t.Fatalf("victim %s in entry %d, its preemptor in %d", s.AllocID, part, partOfAlloc[s.PreemptedBy])
			}
			if s.PreemptedBy != "" && v.Workload != "" {
				if p, ok := partOfEval["eval-"+v.Workload]; !ok || p > part {
					t.Fatalf("victim workload %s evicted in entry %d, re-evaluated in %d (ok %v)", v.Workload, part, p, ok)
				}
			}
		}
	})
}

// unitsIn counts the classes of records of one decoded entry that the
// rules bind together (an independent count, for the size check).
func unitsIn(p *ApplyPlan, existing map[string]StoppedAlloc) int {
	parent := map[string]string{}
	var find func(string) string
	find = func(x string) string {
		if _, ok := parent[x]; !ok {
			parent[x] = x
		}
		if parent[x] != x {
			parent[x] = find(parent[x])
		}
		return parent[x]
	}
	union := func(a, b string) { parent[find(a)] = find(b) }
	nodeOf := map[string]string{}
	for _, a := range p.Place {
		nodeOf[a.ID] = a.NodeID
		find(a.NodeID)
		if g := GangKey(a.Workload, a.TaskGroup); g != "" {
			union(a.NodeID, g)
		}
	}
	for _, s := range p.Stop {
		v := existing[s.AllocID]
		key := v.Node
		if key == "" {
			key = "stop " + s.AllocID
		}
		find(key)
		if n, ok := nodeOf[s.PreemptedBy]; ok {
			union(key, n)
		}
		if v.Gang != "" {
			union(key, v.Gang)
		}
	}
	roots := map[string]bool{}
	for x := range parent {
		roots[find(x)] = true
	}
	return len(roots)
}
