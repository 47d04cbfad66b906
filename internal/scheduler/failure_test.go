package scheduler

import (
	"testing"

	"github.com/strata-dev/strata/api"
)

func TestSummarize(t *testing.T) {
	tests := []struct {
		name    string
		reasons map[string]int
		want    string
	}{
		{"empty", map[string]int{}, ""},
		{"one node", map[string]int{"node not ready": 1}, "1 node: node not ready"},
		{"by count then text", map[string]int{"rack != r3": 2, "insufficient memory": 7, "insufficient cpu": 2},
			"7 nodes: insufficient memory; 2 nodes: insufficient cpu; 2 nodes: rack != r3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mustEqual(t, "summary", summarize(tt.reasons), tt.want)
		})
	}
}

func TestFailureReasons(t *testing.T) {
	f := newFake(
		node("a1").cpu(4000).mem("2Gi").label("rack", "r3"),
		node("a2").cpu(4000).mem("2Gi").label("rack", "r3"),
		node("b1").cpu(4000).mem("64Gi").label("rack", "r1"),
		node("b2").cpu(4000).mem("64Gi").label("rack", "r2"),
		node("c1").cpu(4000).mem("64Gi").label("rack", "r3").status(api.NodeDown),
		node("d1").cpu(8000).mem("64Gi").label("rack", "r3"),
	)
	f.putWorkload(workload("db", taskGroup("g").replicas(3).cpu(3000).mem("4Gi").require("rack", "=", "r3")))
	plan := schedule(f, "db", 1)
	mustEqual(t, "placed on d1", len(plan.Place["d1"]), 2)
	mustEqual(t, "failures", len(plan.Failures), 1)
	got := plan.Failures[0]
	mustEqual(t, "group", got.Group, "g")
	mustEqual(t, "missing", got.Missing, 1)
	mustEqual(t, "nodes evaluated", got.NodesEvaluated, 6)
	mustEqual(t, "summary", got.Summary, "2 nodes: insufficient memory; 2 nodes: rack != r3; 1 node: insufficient cpu; 1 node: node not ready")
	mustEqual(t, "reasons", got.Reasons["rack != r3"], 2)
}

func TestFailureReasonTexts(t *testing.T) {
	tests := []struct {
		name  string
		group *groupBuilder
		node  *nodeBuilder
		want  string
	}{
		{"in", taskGroup("g").require("rack", "in", "r1", "r2"), node("n").cpu(1000).label("rack", "r9"), "1 node: rack not in [r1 r2]"},
		{"disk", taskGroup("g").disk("2Gi"), node("n").disk("1Gi"), "1 node: insufficient disk"},
		{"bandwidth", taskGroup("g").net(2000), node("n").net(1000), "1 node: insufficient bandwidth"},
		{"gpu model", taskGroup("g").gpus(1).models("A100", "V100"), node("n").gpu("0", "T4", 0), "1 node: no gpu of model A100|V100"},
		{"numa", taskGroup("g").cpu(4000).exclusive(), node("n").cpu(8000).numa(0, "", cpus(0, 3)...).numa(1, "", cpus(3, 8)...), ""},
		{"numa fails", taskGroup("g").cpu(3500).exclusive(), node("n").cpu(8000).numa(0, "", cpus(0, 3)...).numa(1, "", cpus(3, 6)...), "1 node: no NUMA node with 4 free cores"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(tt.node)
			f.putWorkload(workload("w", tt.group))
			plan := schedule(f, "w", 1)
			got := ""
			if len(plan.Failures) > 0 {
				got = plan.Failures[0].Summary
			}
			mustEqual(t, "summary", got, tt.want)
		})
	}
}

func TestEmptyCell(t *testing.T) {
	f := newFake()
	f.putWorkload(workload("w", taskGroup("g").replicas(2)))
	plan := schedule(f, "w", 1)
	mustEqual(t, "missing", plan.Failures[0].Missing, 2)
	mustEqual(t, "summary", plan.Failures[0].Summary, "no nodes in the cell")
}
