package scheduler

import (
	"encoding/json"
	"flag"
	"fmt"
	"hash/fnv"
	"os"
	"strings"
	"testing"

	"github.com/strata-dev/strata/api"
	"pgregory.net/rapid"
)

// rewrite regenerates golden files (the plan digest, the explanation
// transcripts): go test ./internal/scheduler -run 'Digest|Transcript' -rewrite
var rewrite = flag.Bool("rewrite", false, "rewrite the golden files in testdata")

// digestScenarios is how many random scenarios TestPlanDigest replays.
const digestScenarios = 1000

// digestScenario is one deterministic story: a random cell (racks, zones,
// GPUs, NUMA layouts, nodes down or draining), random background work of
// random priorities, and a workload of up to three groups (every resource
// shape, label rules, relation rules, gangs, policies) that grows, is
// updated and loses a node over several evaluations. It returns every
// plan as JSON, ids, failures and explanations included.
func digestScenario(t *rapid.T) string {
	var nodes []*nodeBuilder
	for i := range rapid.IntRange(1, 18).Draw(t, "nodes") {
		b := genNode(t, i)
		if rapid.IntRange(0, 5).Draw(t, "zoneRoll") > 0 {
			b.label("zone", fmt.Sprintf("z%d", rapid.IntRange(0, 2).Draw(t, "zone")))
		}
		if rapid.IntRange(0, 3).Draw(t, "dataRoll") == 0 {
			b.label(api.DatasetLabelPrefix+"ds", fmt.Sprint(rapid.IntRange(1, 4).Draw(t, "shards")))
		}
		nodes = append(nodes, b)
	}
	f := newFake(nodes...)
	genBackground(t, f, 3)
	w := workload("w")
	for gi := range rapid.IntRange(1, 3).Draw(t, "groups") {
		g := genGroup(t, fmt.Sprint("g", gi))
		for range rapid.IntRange(0, 2).Draw(t, "relations") {
			genRelations(t, g)
		}
		switch rapid.IntRange(0, 6).Draw(t, "extra") {
		case 1:
			g.prefer(rapid.IntRange(1, 100).Draw(t, "preferWeight"), "zone", "=", "z1")
		case 2:
			g.avoid(rapid.IntRange(1, 100).Draw(t, "avoidWeight"), "rack", "in", "r0", "r1")
		case 3:
			g.peer(rapid.SampledFrom([]string{"", "bg0"}).Draw(t, "peer"), rapid.IntRange(1, 100).Draw(t, "peerWeight"))
		case 4:
			g.data("ds", rapid.SampledFrom([]string{api.ModeHard, api.ModeSoft}).Draw(t, "dataMode"), rapid.IntRange(1, 100).Draw(t, "dataWeight"))
		}
		if rapid.IntRange(0, 3).Draw(t, "gangRoll") == 0 {
			g.gang(rapid.IntRange(0, 3).Draw(t, "minMember"), rapid.SampledFrom([]string{"", "rack", "zone", "node"}).Draw(t, "topology"))
		}
		w.Groups = append(w.Groups, g.g)
	}
	w.Priority = rapid.IntRange(0, 100).Draw(t, "priority")
	w.SchedulingPolicy.Type = rapid.SampledFrom([]string{api.PolicyBinpack, api.PolicySpread, api.PolicyDotProduct, api.PolicyRandom}).Draw(t, "policy")
	var sb strings.Builder
	for step := range rapid.IntRange(1, 4).Draw(t, "steps") {
		switch rapid.IntRange(0, 4).Draw(t, "change") {
		case 0, 1:
			for _, g := range w.Groups {
				g.Replicas += rapid.IntRange(0, 5).Draw(t, "more")
			}
		case 2:
			w.Version++
			w.Groups[0].Tasks[0].Command = []string{fmt.Sprint("v", w.Version)}
		case 3:
			n := f.nodes[rapid.IntRange(0, len(f.nodes)-1).Draw(t, "downNode")]
			n.Status = api.NodeDown
		}
		f.putWorkload(w)
		sample := rapid.SampledFrom([]int{0, 1, 3, -1}).Draw(t, "sample")
		plan := Schedule(f, &api.Evaluation{ID: fmt.Sprint("e", step), Workload: "w"}, Options{Seed: int64(step), FeasibleSample: sample})
		b, err := json.Marshal(plan)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		sb.Write(b)
		sb.WriteByte('\n')
		f.apply(plan, rapid.Bool().Draw(t, "finish"))
	}
	return sb.String()
}

// TestPlanDigest replays digestScenarios fixed random scenarios and
// compares a hash of every plan they make with testdata/plan_digest.golden.
// A refactoring or an optimisation that must not change what the
// scheduler decides keeps the digest; a change of semantics rewrites it
// (-rewrite) and says why in its commit. The scenarios are drawn from the
// property tests' generators with fixed seeds (rapid's Example), so the
// digest covers what they cover: every resource shape, label and relation
// rules, gangs, preemption, scaling, updates and lost nodes.
func TestPlanDigest(t *testing.T) {
	gen := rapid.Custom(digestScenario)
	h := fnv.New64a()
	for seed := range digestScenarios {
		h.Write([]byte(gen.Example(seed)))
	}
	got := fmt.Sprintf("%016x\n", h.Sum64())
	const golden = "testdata/plan_digest.golden"
	if *rewrite {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -rewrite to create it)", err)
	}
	if got != string(want) {
		t.Fatalf("plan digest = %s, golden %s: plans changed (if on purpose, run with -rewrite and say why)", strings.TrimSpace(got), strings.TrimSpace(string(want)))
	}
}
