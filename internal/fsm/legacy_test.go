package fsm

import (
	"io"
	"log/slog"
	"testing"

	"github.com/strata-dev/strata/api"
)

// legacyApplyPlan is an apply-plan entry as servers before the compact
// form wrote it (a whole plan, every allocation with its group spec).
// Logs hold such entries; they must apply as they did.
const legacyApplyPlan = `{"place":[` +
	`{"id":"a1","workload":"w","group":"g","index":0,"nodeId":"n1","nodeName":"n1","workloadVersion":1,"priority":50,` +
	`"taskGroup":{"name":"g","replicas":2,"tasks":[{"name":"t","driver":"mock","command":["x"],"resources":{"cpuMilli":100},"killTimeout":0,"pidsLimit":0}],"placement":{},"restartPolicy":{"mode":"never","attempts":0,"delay":0,"maxDelay":0}},` +
	`"resources":{"cpuMilli":100},"assignment":{"numaNode":-1},"desiredStatus":"run","clientStatus":"pending","createTime":"2026-12-01T00:00:00Z","createIndex":0,"modifyIndex":0},` +
	`{"id":"a2","workload":"w","group":"g","index":1,"nodeId":"n1","nodeName":"n1","workloadVersion":1,"priority":50,` +
	`"taskGroup":{"name":"g","replicas":2,"tasks":[{"name":"t","driver":"mock","command":["x"],"resources":{"cpuMilli":100},"killTimeout":0,"pidsLimit":0}],"placement":{},"restartPolicy":{"mode":"never","attempts":0,"delay":0,"maxDelay":0}},` +
	`"resources":{"cpuMilli":100},"assignment":{"numaNode":-1},"desiredStatus":"run","clientStatus":"pending","createTime":"2026-12-01T00:00:00Z","createIndex":0,"modifyIndex":0}` +
	`],"eval":{"id":"e1","workload":"w","priority":50,"triggeredBy":"workload-register","status":"complete","createTime":"2026-12-01T00:00:00Z","createIndex":0,"modifyIndex":0},` +
	`"time":"2026-12-01T00:00:00Z"}`

func TestLegacyApplyPlanEntryStillApplies(t *testing.T) {
	f := New(slog.New(slog.NewTextHandler(io.Discard, nil)))
	node, _ := Commands.Encode(&UpsertNode{Node: &api.Node{ID: "n1", Name: "n1", Status: api.NodeReady,
		Capacity: api.Resources{CPUMilli: 1000}}})
	if err := f.Apply(1, node); err != nil {
		t.Fatal(err)
	}
	if err := f.Apply(2, append([]byte{byte(legacyPlanValue)}, legacyApplyPlan...)); err != nil {
		t.Fatal(err)
	}
	snap := f.State().Snapshot()
	a1, a2 := snap.Alloc("a1"), snap.Alloc("a2")
	if a1 == nil || a2 == nil || snap.Eval("e1").Status != api.EvalComplete || snap.Node("n1").Allocated.CPUMilli != 200 {
		t.Fatalf("legacy plan not applied: %+v %+v", a1, a2)
	}
	if a1.TaskGroup != a2.TaskGroup || a1.TaskGroup.Tasks[0].Command[0] != "x" {
		t.Fatal("the two allocations of one group do not share its spec")
	}
}
