package scheduler

import (
	"testing"

	"github.com/strata-dev/strata/api"
)

func (b *nodeBuilder) drivers(d ...string) *nodeBuilder { b.n.Drivers = d; return b }

func (b *groupBuilder) driver(d string) *groupBuilder { b.task().Driver = d; return b }

func TestDriverFilter(t *testing.T) {
	tests := []struct {
		name  string
		group *groupBuilder
		node  *nodeBuilder
		want  string
	}{
		{"containerd task, node offers it", taskGroup("g").driver("containerd"), node("n1").drivers("containerd", "exec", "mock"), ""},
		{"containerd task, node without it", taskGroup("g").driver("containerd"), node("n1").drivers("exec", "mock"), "no driver containerd"},
		{"containerd task, node reports no drivers (defaults)", taskGroup("g").driver("containerd"), node("n1"), "no driver containerd"},
		{"default driver on a node reporting none", taskGroup("g"), node("n1"), ""},
		{"exec task on a node whose exec failed", taskGroup("g").driver("exec"), node("n1").drivers("containerd", "mock"), "no driver exec"},
		{"mock task anywhere by default", taskGroup("g").driver("mock"), node("n1"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mustEqual(t, "reason", checkOne(driverFilter{}, tt.group, tt.node), tt.want)
		})
	}
}

// TestImageTasksPlaceOnlyWhereContainerdRuns is the defect: a task
// with an image was placed on nodes that could not run it. The group is
// placed on the one node with the driver, and when none has it the
// failure says why.
func TestImageTasksPlaceOnlyWhereContainerdRuns(t *testing.T) {
	ml := func() *api.Workload {
		g := taskGroup("inference").cpu(1000).mem("1Gi").replicas(2).driver("containerd")
		g.task().Image = "oci-archive:/srv/ml.tar"
		return workload("ml", g)
	}
	f := newFake(
		node("plain1").cpu(8000).mem("16Gi"),
		node("plain2").cpu(8000).mem("16Gi").drivers("exec", "mock"),
		node("ctr").cpu(8000).mem("16Gi").drivers("containerd", "exec", "mock"),
	)
	f.putWorkload(ml())
	plan := schedule(f, "ml", 1)
	mustEqual(t, "failures", len(plan.Failures), 0)
	placed := 0
	for nodeID, allocs := range plan.Place {
		mustEqual(t, "node of a containerd task", nodeID, "ctr")
		placed += len(allocs)
	}
	mustEqual(t, "placed", placed, 2)

	f = newFake(node("plain1").cpu(8000).mem("16Gi"), node("plain2").cpu(8000).mem("16Gi").drivers("exec", "mock"))
	f.putWorkload(ml())
	plan = schedule(f, "ml", 1)
	mustEqual(t, "failures", len(plan.Failures), 1)
	mustEqual(t, "summary", plan.Failures[0].Summary, "2 nodes: no driver containerd")
}

func TestCheckNodeRefusesANodeWithoutTheDriver(t *testing.T) {
	g := taskGroup("inference").cpu(100).driver("containerd")
	alloc := &api.Allocation{ID: "a1", TaskGroup: g.g, Resources: api.Resources{CPUMilli: 100}}
	n := node("n1").cpu(8000).mem("16Gi").n
	ok, reason := CheckNode(n, nil, nil, []*api.Allocation{alloc})
	mustEqual(t, "ok", ok, false)
	mustEqual(t, "reason", reason, "alloc a1: no driver containerd")
	n.Drivers = []string{"containerd", "exec"}
	ok, reason = CheckNode(n, nil, nil, []*api.Allocation{alloc})
	mustEqual(t, "ok with the driver", ok, true)
	mustEqual(t, "reason", reason, "")
}
