package spec

import (
	"os"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
)

// The seed's example must map exactly as docs/workload-spec.md promises.
func TestSeedMapping(t *testing.T) {
	data, err := os.ReadFile("../../examples/ml-inference.yaml")
	if err != nil {
		t.Fatal(err)
	}
	w := mustParse(t, string(data))

	equal(t, "name", w.Name, "my-ml-inference")
	equal(t, "policy", w.SchedulingPolicy, api.SchedulingPolicy{Type: api.PolicyPredictive, Original: "PredictiveMLOptimized"})
	if len(w.Groups) != 1 {
		t.Fatalf("got %d groups, want the one the containers shorthand stands for", len(w.Groups))
	}
	g := w.Groups[0]
	equal(t, "group", []any{g.Name, g.Replicas}, []any{"my-ml-inference", 1})
	equal(t, "task", g.Tasks, []*api.Task{{
		Name:   "inference-engine",
		Driver: DriverContainerd,
		Image:  "custom-ml-image:v2.1",
		Resources: api.Resources{
			CPUMilli:    8000,
			MemoryBytes: 64 << 30,
			GPUs:        1,
			NetMbps:     100000, // minBandwidthGbps: 100
		},
		KillTimeout: 5 * time.Second,
		PidsLimit:   1024,
	}})
	equal(t, "placement", g.Placement, api.Placement{
		Require: []api.LabelRule{{Key: "datacenter", Op: "=", Values: []string{"us-east-4"}, Source: "datacenter: us-east-4"}},
		Prefer: []api.LabelRule{{Key: "rack", Op: "=", Values: []string{"low-latency-rack-group-A"}, Weight: 50,
			Source: "rack: prefer-low-latency-rack-group-A"}},
		Avoid: []api.LabelRule{{Key: "powerZone", Op: "=", Values: []string{"zone-B"}, Weight: 50, Window: "peak-hours",
			Source: "powerZone: avoid-zone-B-peak-hours"}},
	})
	equal(t, "notices", w.Unenforced, []api.Notice{
		{Field: "apiVersion", Value: "internal.hyperscaler.com/v1alpha1", Message: "accepted as strata.dev/v1"},
		{Field: "spec.placementConstraints.numaNode", Value: "preferred-node-0", Message: NotEnforced},
		{Field: "spec.placementConstraints.networkTrafficProfile", Value: "high-bandwidth-internal-only", Message: NotEnforced},
		{Field: "spec.schedulingPolicy.rebalanceFrequency", Value: "daily", Message: "rebalancing is not implemented; accepted, not yet enforced"},
	})
}

func TestPlacementConstraintValues(t *testing.T) {
	tests := []struct {
		constraint string
		want       api.Placement
	}{
		{"zone: z1", api.Placement{Require: []api.LabelRule{{Key: "zone", Op: "=", Values: []string{"z1"}, Source: "zone: z1"}}}},
		{"row: 3", api.Placement{Require: []api.LabelRule{{Key: "row", Op: "=", Values: []string{"3"}, Source: "row: 3"}}}},
		{"rack: prefer-r1-peak-hours", api.Placement{Prefer: []api.LabelRule{{Key: "rack", Op: "=", Values: []string{"r1"}, Weight: 50,
			Window: "peak-hours", Source: "rack: prefer-r1-peak-hours"}}}},
		{"powerZone: avoid-B-offpeak-hours", api.Placement{Avoid: []api.LabelRule{{Key: "powerZone", Op: "=", Values: []string{"B"}, Weight: 50,
			Window: "offpeak-hours", Source: "powerZone: avoid-B-offpeak-hours"}}}},
		// Only the exact prefixes map: "preferred-" is a plain value.
		{"switch: preferred-s1", api.Placement{Require: []api.LabelRule{{Key: "switch", Op: "=", Values: []string{"preferred-s1"},
			Source: "switch: preferred-s1"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.constraint, func(t *testing.T) {
			w := mustParse(t, doc("  containers: [{name: c, command: [x]}]\n  placementConstraints: {"+tt.constraint+"}\n"))
			equal(t, "placement", w.Groups[0].Placement, tt.want)
		})
	}
}

// placementConstraints applies to every group; minBandwidthGbps tops up the
// first task so each group instance has the minimum in total.
func TestPlacementConstraintsOnGroups(t *testing.T) {
	w := mustParse(t, doc(`  groups:
    - name: a
      tasks:
        - {name: x, command: [x], resources: {bandwidth: 1Gbps}}
        - {name: y, command: [x], resources: {bandwidth: 2Gbps}}
    - name: b
      tasks:
        - {name: x, command: [x], resources: {bandwidth: 20Gbps}}
  placementConstraints:
    zone: z1
    minBandwidthGbps: 10
    gpuType: a100
`))
	a, b := w.Groups[0], w.Groups[1]
	equal(t, "group a bandwidth", []int64{a.Tasks[0].Resources.NetMbps, a.Tasks[1].Resources.NetMbps}, []int64{8000, 2000})
	equal(t, "group b bandwidth (already above the minimum)", b.Tasks[0].Resources.NetMbps, int64(20000))
	rule := []api.LabelRule{{Key: "zone", Op: "=", Values: []string{"z1"}, Source: "zone: z1"}}
	equal(t, "group a require", a.Placement.Require, rule)
	equal(t, "group b require", b.Placement.Require, rule)
	equal(t, "notices", w.Unenforced, []api.Notice{{Field: "spec.placementConstraints.gpuType", Value: "a100", Message: NotEnforced}})
}

func TestContainerWithCommandRunsOnExec(t *testing.T) {
	w := mustParse(t, doc("  containers: [{name: c, image: busybox, command: [/bin/true]}]\n"))
	task := w.Groups[0].Tasks[0]
	equal(t, "driver", task.Driver, DriverExec)
	equal(t, "image kept", task.Image, "busybox")
	if len(w.Unenforced) != 1 || w.Unenforced[0].Field != "spec.containers[0].image" {
		t.Errorf("want a notice that exec ignores the image, got %+v", w.Unenforced)
	}
}
