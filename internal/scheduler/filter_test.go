package scheduler

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
)

// checkOne runs filter f for group g on a one-node cell.
func checkOne(f filter, g *groupBuilder, n *nodeBuilder) string {
	c := newCell(newFake(n), 1)
	return f.check(compiled(nil, g), c, c.at(0), 0)
}

func TestReadyFilter(t *testing.T) {
	tests := []struct{ status, want string }{
		{api.NodeReady, ""},
		{api.NodeDown, "node not ready"},
		{"unknown", "node not ready"},
		// Alive: the eligible filter judges operator states.
		{api.NodeDraining, ""},
		{api.NodeQuarantined, ""},
	}
	for _, tt := range tests {
		t.Run(tt.status, func(t *testing.T) {
			mustEqual(t, "reason", checkOne(readyFilter{}, taskGroup("g"), node("n1").status(tt.status)), tt.want)
		})
	}
}

// TestEligibleFilter: a live node that an operator cordoned, drains or
// quarantined takes no new work, and says which.
func TestEligibleFilter(t *testing.T) {
	deadline := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		node func(n *api.Node)
		want string
	}{
		{"ready and eligible", func(*api.Node) {}, ""},
		{"explicitly eligible", func(n *api.Node) { n.Eligibility = api.NodeEligible }, ""},
		{"cordoned", func(n *api.Node) { n.Eligibility = api.NodeIneligible }, "node ineligible"},
		{"draining", func(n *api.Node) {
			n.Status, n.Eligibility, n.Drain = api.NodeDraining, api.NodeIneligible, &api.DrainSpec{Deadline: deadline}
		}, "node draining"},
		{"draining status alone (older records, bench)", func(n *api.Node) { n.Status = api.NodeDraining }, "node draining"},
		{"quarantined while draining", func(n *api.Node) {
			n.Status, n.Eligibility = api.NodeQuarantined, api.NodeIneligible
			n.Drain, n.Quarantine = &api.DrainSpec{Deadline: deadline}, &api.Quarantine{Reason: "ecc errors"}
		}, "node quarantined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nb := node("n1")
			tt.node(nb.n)
			mustEqual(t, "reason", checkOne(eligibleFilter{}, taskGroup("g"), nb), tt.want)
		})
	}
}

func TestRequireFilter(t *testing.T) {
	n := func() *nodeBuilder { return node("n1").label("rack", "r1").label("zone", "z1") }
	tests := []struct {
		name  string
		group *groupBuilder
		want  string
	}{
		{"no rules", taskGroup("g"), ""},
		{"all match", taskGroup("g").require("rack", "=", "r1").require("zone", "in", "z1", "z2"), ""},
		{"equal fails", taskGroup("g").require("rack", "=", "r3"), "rack != r3"},
		{"first failing rule wins", taskGroup("g").require("zone", "notin", "z1").require("rack", "=", "r3"), "zone in [z1]"},
		{"in fails", taskGroup("g").require("rack", "in", "r1x", "r2"), "rack not in [r1x r2]"},
		{"exists fails", taskGroup("g").require("ssd", "exists"), "no label ssd"},
		{"not equal fails", taskGroup("g").require("rack", "!=", "r1"), "rack = r1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mustEqual(t, "reason", checkOne(requireFilter{}, tt.group, n()), tt.want)
		})
	}
}

func TestResourceFilter(t *testing.T) {
	n := func() *nodeBuilder {
		return node("n1").cpu(4000).mem("8Gi").disk("100Gi").net(1000).used(api.Resources{CPUMilli: 1000, MemoryBytes: bytesOf("2Gi")})
	}
	tests := []struct {
		name  string
		group *groupBuilder
		want  string
	}{
		{"fits exactly", taskGroup("g").cpu(3000).mem("6Gi").disk("100Gi").net(1000), ""},
		{"cpu", taskGroup("g").cpu(3001), "insufficient cpu"},
		{"memory", taskGroup("g").cpu(100).mem("7Gi"), "insufficient memory"},
		{"disk", taskGroup("g").disk("101Gi"), "insufficient disk"},
		{"gpu", taskGroup("g").gpus(1), "insufficient gpu"},
		{"bandwidth", taskGroup("g").net(1001), "insufficient bandwidth"},
		{"cpu reported before memory", taskGroup("g").cpu(5000).mem("9Gi"), "insufficient cpu"},
		{"exclusive charged whole cores", taskGroup("g").cpu(2100).exclusive(), ""},
		{"exclusive rounding overflows", taskGroup("g").cpu(3100).exclusive(), "insufficient cpu"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mustEqual(t, "reason", checkOne(resourceFilter{}, tt.group, n()), tt.want)
		})
	}
}

func TestResourceFilterSeesPlanStopsAndPlacements(t *testing.T) {
	f := newFake(node("n1").cpu(4000).mem("8Gi"))
	old := &api.Allocation{ID: "a1", NodeID: "n1", Resources: api.Resources{CPUMilli: 3000}, DesiredStatus: api.DesiredRun, ClientStatus: api.AllocRunning}
	f.putAlloc(old)
	c := newCell(f, 1)
	g := compiled(nil, taskGroup("g").cpu(2000))
	mustEqual(t, "before stop", resourceFilter{}.check(g, c, c.at(0), 0), "insufficient cpu")
	c.stop(stopIntent{alloc: old, reason: "x"})
	mustEqual(t, "after stop", resourceFilter{}.check(g, c, c.at(0), 0), "")
	c.place(0, &api.Allocation{ID: "b1", Resources: api.Resources{CPUMilli: 2500}})
	mustEqual(t, "after placement", resourceFilter{}.check(g, c, c.at(0), 0), "insufficient cpu")
}

func TestGPUModelFilter(t *testing.T) {
	tests := []struct {
		name  string
		group *groupBuilder
		node  *nodeBuilder
		want  string
	}{
		{"any model", taskGroup("g").gpus(1), node("n1").gpu("0", "T4", 0), ""},
		{"no gpus at all", taskGroup("g").gpus(1), node("n1"), "insufficient gpu"},
		{"acceptable model present", taskGroup("g").gpus(1).models("A100", "V100"), node("n1").gpu("0", "T4", 0).gpu("1", "V100", 0), ""},
		{"no acceptable model", taskGroup("g").gpus(1).models("A100", "V100"), node("n1").gpu("0", "T4", 0), "no gpu of model A100|V100"},
		{"share of a wrong model", taskGroup("g").gpuMilli(300).models("A100"), node("n1").gpu("0", "T4", 0), "no gpu of model A100"},
		// the rules of internal/gpumodel: a family accepts the fingerprinted model
		{"family accepts the full model", taskGroup("g").gpus(1).models("A100"), node("n1").gpu("0", "NVIDIA A100-SXM4-80GB", 0), ""},
		{"memory narrows: same", taskGroup("g").gpus(1).models("A100-80GB"), node("n1").gpu("0", "NVIDIA A100-SXM4-80GB", 0), ""},
		{"memory narrows: other", taskGroup("g").gpus(1).models("A100-40GB"), node("n1").gpu("0", "NVIDIA A100-SXM4-80GB", 0), "no gpu of model A100-40GB"},
		{"h100 hbm3", taskGroup("g").gpus(1).models("h100"), node("n1").gpu("0", "NVIDIA H100 80GB HBM3", 0), ""},
		{"a10 is not an a100", taskGroup("g").gpus(1).models("A10"), node("n1").gpu("0", "NVIDIA A100-SXM4-80GB", 0), "no gpu of model A10"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mustEqual(t, "reason", checkOne(gpuModelFilter{}, tt.group, tt.node), tt.want)
		})
	}
}

func TestAcceptableModelsIntersectTasks(t *testing.T) {
	g := taskGroup("g").gpus(1).models("A100", "V100")
	g.g.Tasks = append(g.g.Tasks, &api.Task{Name: "side", GPUModels: []string{"V100", "H100"}})
	c := compiled(nil, g)
	mustEqual(t, "accepts V100", c.acceptsModel("V100"), true)
	mustEqual(t, "accepts A100", c.acceptsModel("A100"), false)

	g.g.Tasks[1].GPUModels = []string{"H100"}
	c = compiled(nil, g)
	mustEqual(t, "reason", checkOne(gpuModelFilter{}, g, node("n1").gpu("0", "A100", 0)), "no gpu model accepted by every task")
	mustEqual(t, "accepts A100", c.acceptsModel("A100"), false)

	// patterns intersect by overlap: A100 and A100-80GB both accept an 80GB A100
	g.g.Tasks[0].GPUModels = []string{"A100"}
	g.g.Tasks[1].GPUModels = []string{"A100-80GB"}
	c = compiled(nil, g)
	mustEqual(t, "accepts an 80GB A100", c.acceptsModel("NVIDIA A100-SXM4-80GB"), true)
	mustEqual(t, "refuses a 40GB A100", c.acceptsModel("NVIDIA A100-PCIE-40GB"), false)
	mustEqual(t, "noModel", c.noModel, false)
}

func TestNUMAFilter(t *testing.T) {
	twoSockets := func() *nodeBuilder {
		return node("n1").cpu(8000).mem("16Gi").numa(0, "8Gi", cpus(0, 4)...).numa(1, "8Gi", cpus(4, 8)...)
	}
	tests := []struct {
		name  string
		group *groupBuilder
		node  *nodeBuilder
		want  string
	}{
		{"fits one socket", taskGroup("g").cpu(4000).exclusive(), twoSockets(), ""},
		{"needs five cores on one socket", taskGroup("g").cpu(4001).exclusive(), twoSockets(), "no NUMA node with 5 free cores"},
		{"local memory too small", taskGroup("g").cpu(1000).mem("9Gi").exclusive(), twoSockets(), "no NUMA node with 1 free cores"},
		{"unknown numa memory is not limiting", taskGroup("g").cpu(1000).mem("9Gi").exclusive(), node("n1").numa(0, "", 0, 1), ""},
		{"no numa layout", taskGroup("g").cpu(1000).exclusive(), node("n1").cpu(8000), "no NUMA node with 1 free cores"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mustEqual(t, "reason", checkOne(numaFilter{}, tt.group, tt.node), tt.want)
		})
	}
}

func TestNUMAFilterSeesTakenCores(t *testing.T) {
	f := newFake(node("n1").cpu(8000).numa(0, "", cpus(0, 4)...).numa(1, "", cpus(4, 8)...))
	f.putAlloc(&api.Allocation{ID: "a1", NodeID: "n1", DesiredStatus: api.DesiredRun, ClientStatus: api.AllocRunning,
		Resources: api.Resources{CPUMilli: 1000}, Assignment: api.Assignment{CPUs: []int{0}, NUMANode: 0}})
	f.putAlloc(&api.Allocation{ID: "a2", NodeID: "n1", DesiredStatus: api.DesiredRun, ClientStatus: api.AllocRunning,
		Resources: api.Resources{CPUMilli: 1000}, Assignment: api.Assignment{CPUs: []int{5}, NUMANode: 1}})
	f.putAlloc(&api.Allocation{ID: "a3", NodeID: "n1", DesiredStatus: api.DesiredRun, ClientStatus: api.AllocComplete,
		Resources: api.Resources{CPUMilli: 1000}, Assignment: api.Assignment{CPUs: []int{6}, NUMANode: 1}})
	c := newCell(f, 1)
	mustEqual(t, "3 cores", numaFilter{}.check(compiled(nil, taskGroup("g").cpu(3000).exclusive()), c, c.at(0), 0), "")
	mustEqual(t, "4 cores", numaFilter{}.check(compiled(nil, taskGroup("g").cpu(4000).exclusive()), c, c.at(0), 0), "no NUMA node with 4 free cores")
}

func TestGPUFitFilter(t *testing.T) {
	f := newFake(node("n1").gpu("0", "A100", 0).gpu("1", "A100", 0).gpu("2", "T4", 1))
	f.putAlloc(&api.Allocation{ID: "whole", NodeID: "n1", DesiredStatus: api.DesiredRun, ClientStatus: api.AllocRunning,
		Resources: api.Resources{GPUs: 1}, Assignment: api.Assignment{GPUs: []string{"0"}, NUMANode: -1}})
	f.putAlloc(&api.Allocation{ID: "share", NodeID: "n1", DesiredStatus: api.DesiredRun, ClientStatus: api.AllocRunning,
		Resources: api.Resources{GPUMilli: 600}, Assignment: api.Assignment{GPUs: []string{"1"}, GPUMilli: 600, NUMANode: -1}})
	tests := []struct {
		name  string
		group *groupBuilder
		want  string
	}{
		{"one whole T4 free", taskGroup("g").gpus(1), ""},
		{"no whole A100 free", taskGroup("g").gpus(1).models("A100"), "insufficient gpu"},
		{"two whole gpus not free", taskGroup("g").gpus(2), "insufficient gpu"},
		{"share fits next to 600", taskGroup("g").gpuMilli(400).models("A100"), ""},
		{"share too big for the shared A100", taskGroup("g").gpuMilli(401).models("A100"), "insufficient gpu"},
		{"share over 1000", taskGroup("g").gpuMilli(1200), "gpu share over 1000 milli"},
		{"mixed request", taskGroup("g").gpus(1).gpuMilli(500), "gpu request mixes whole gpus and a share"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCell(f, 1)
			mustEqual(t, "reason", gpuFitFilter{}.check(compiled(nil, tt.group), c, c.at(0), 0), tt.want)
		})
	}
}

// TestNoPlacementOnUnschedulableNodes: a plan places nothing on cordoned,
// draining or quarantined nodes, and its explanation and failure say why.
func TestNoPlacementOnUnschedulableNodes(t *testing.T) {
	cordoned := node("cordoned").cpu(8000).mem("8Gi")
	cordoned.n.Eligibility = api.NodeIneligible
	draining := node("draining").cpu(8000).mem("8Gi")
	draining.n.Status, draining.n.Drain = api.NodeDraining, &api.DrainSpec{}
	quarantined := node("quarantined").cpu(8000).mem("8Gi")
	quarantined.n.Status, quarantined.n.Quarantine = api.NodeQuarantined, &api.Quarantine{Reason: "ecc"}
	f := newFake(cordoned, draining, quarantined, node("ready").cpu(2000).mem("8Gi"))
	f.putWorkload(workload("w", taskGroup("g").replicas(3).cpu(1000)))
	plan := Schedule(f, &api.Evaluation{ID: "e", Workload: "w"}, Options{Seed: 1, FeasibleSample: -1})
	for _, a := range planAllocs(plan) {
		mustEqual(t, "node of "+a.ID, a.NodeID, "ready")
	}
	mustEqual(t, "placed", len(planAllocs(plan)), 2)
	mustEqual(t, "filtered", fmt.Sprint(plan.Explanations[0].Filtered),
		"[{eligible node draining 1 [draining]} {eligible node ineligible 1 [cordoned]} {eligible node quarantined 1 [quarantined]}]")
	mustEqual(t, "failures", len(plan.Failures), 1)
	for _, want := range []string{"node ineligible", "node draining", "node quarantined", "insufficient cpu"} {
		if !strings.Contains(plan.Failures[0].Summary, want) {
			t.Errorf("failure %q does not say %q", plan.Failures[0].Summary, want)
		}
	}
	// The plan applier refuses a plan made before a node was cordoned.
	ok, reason := CheckNode(cordoned.n, nil, nil, []*api.Allocation{{ID: "x", Resources: api.Resources{CPUMilli: 1000}}})
	mustEqual(t, "check cordoned", fmt.Sprint(ok, " ", reason), "false node ineligible")
}
