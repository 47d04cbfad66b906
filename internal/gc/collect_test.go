package gc

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
)

var now = time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)

// cellBuilder holds workloads and the objects Collect reads.
type cellBuilder struct {
	workloads map[string]*api.Workload
	in        Input
	index     uint64
}

func newCell() *cellBuilder {
	c := &cellBuilder{workloads: map[string]*api.Workload{}, index: 100}
	c.in.Workload = func(ns, name string) *api.Workload { return c.workloads[ns+"/"+name] }
	return c
}

// workload stores workload name with one group "g" of replicas, created
// at index createIndex.
func (c *cellBuilder) workload(name string, replicas int, createIndex uint64) *cellBuilder {
	c.workloads[api.DefaultNamespace+"/"+name] = &api.Workload{Name: name, Namespace: api.DefaultNamespace, CreateIndex: createIndex,
		Groups: []*api.TaskGroup{{Name: "g", Replicas: replicas}}}
	return c
}

// alloc adds an allocation of workload name's replica index: status
// running, complete, failed or lost; ended ago (when terminal); prev its
// predecessor.
func (c *cellBuilder) alloc(id, name string, index int, status string, ago time.Duration, prev string) *cellBuilder {
	c.index++
	a := &api.Allocation{ID: id, Namespace: api.DefaultNamespace, Workload: name, Group: "g", Index: index, ClientStatus: status,
		DesiredStatus: api.DesiredRun, PreviousAlloc: prev, CreateIndex: c.index, CreateTime: now.Add(-ago - time.Minute),
		TaskGroup: &api.TaskGroup{Name: "g", Reschedule: &api.ReschedulePolicy{Attempts: 2, Interval: 3 * time.Hour}}}
	if status != api.AllocRunning {
		a.ClientStatusTime = now.Add(-ago)
	}
	c.in.Allocs = append(c.in.Allocs, a)
	return c
}

func (c *cellBuilder) eval(id, name, status string, ago time.Duration, createIndex uint64) *cellBuilder {
	c.in.Evals = append(c.in.Evals, &api.Evaluation{ID: id, Namespace: api.DefaultNamespace, Workload: name, Status: status,
		CreateTime: now.Add(-ago), CreateIndex: createIndex})
	return c
}

func (c *cellBuilder) deployment(id, name, status string, ago time.Duration, createIndex uint64) *cellBuilder {
	c.in.Deployments = append(c.in.Deployments, &api.Deployment{ID: id, Namespace: api.DefaultNamespace, Workload: name, Status: status,
		CreateTime: now.Add(-ago - time.Minute), ModifyTime: now.Add(-ago), CreateIndex: createIndex})
	return c
}

func TestCollect(t *testing.T) {
	h := time.Hour
	tests := []struct {
		name             string
		cell             *cellBuilder
		allocs, evals, d string
	}{
		{"a replaced allocation past its retention goes",
			newCell().workload("web", 1, 1).alloc("a1", "web", 0, api.AllocComplete, 2*h, "").alloc("a2", "web", 0, api.AllocRunning, 0, "a1"),
			"a1", "", ""},
		{"one within its retention stays",
			newCell().workload("web", 1, 1).alloc("a1", "web", 0, api.AllocComplete, 30*time.Minute, "").alloc("a2", "web", 0, api.AllocRunning, 0, "a1"),
			"", "", ""},
		{"a live allocation never goes, however old",
			newCell().workload("web", 1, 1).alloc("a1", "web", 0, api.AllocRunning, 100*h, ""),
			"", "", ""},
		{"a finished batch task, its replica's newest, stays: it would run again",
			newCell().workload("job", 2, 1).alloc("a1", "job", 0, api.AllocComplete, 100*h, "").alloc("a2", "job", 1, api.AllocComplete, 100*h, ""),
			"", "", ""},
		{"a replica scaled away takes its last allocation with it",
			newCell().workload("job", 1, 1).alloc("a1", "job", 0, api.AllocComplete, 100*h, "").alloc("a2", "job", 1, api.AllocComplete, 100*h, ""),
			"a2", "", ""},
		{"failures the reschedule interval still counts stay, with the chain between",
			newCell().workload("web", 1, 1).
				alloc("f1", "web", 0, api.AllocFailed, 2*h+30*time.Minute, "").
				alloc("c2", "web", 0, api.AllocComplete, 2*h+10*time.Minute, "f1").
				alloc("f3", "web", 0, api.AllocFailed, 2*h, "c2").
				alloc("a4", "web", 0, api.AllocRunning, 0, "f3"),
			"", "", ""},
		{"failures older than the interval, beyond the kept ones, go",
			func() *cellBuilder {
				c := newCell().workload("web", 1, 1)
				prev := ""
				for i := range KeptFailures + 2 {
					id := fmt.Sprintf("f%02d", i)
					c.alloc(id, "web", 0, api.AllocFailed, time.Duration(KeptFailures+2-i)*4*h, prev)
					prev = id
				}
				return c.alloc("live", "web", 0, api.AllocRunning, 0, prev)
			}(),
			"f00,f01", "", ""},
		{"a purged workload's terminal allocations go at once, live ones stay",
			newCell().alloc("a1", "gone", 0, api.AllocComplete, 0, "").alloc("a2", "gone", 1, api.AllocRunning, 0, ""),
			"a1", "", ""},
		{"an earlier incarnation's go at once",
			newCell().workload("web", 1, 500).alloc("old", "web", 0, api.AllocFailed, 0, ""),
			"old", "", ""},
		{"finished evaluations past retention go, the newest stays",
			newCell().workload("web", 1, 1).eval("e1", "web", api.EvalComplete, 3*h, 10).eval("e2", "web", api.EvalFailed, 2*h, 11).
				eval("e3", "web", api.EvalComplete, 2*h, 12),
			"", "e1,e2", ""},
		{"pending and blocked evaluations stay",
			newCell().workload("web", 1, 1).eval("e1", "web", api.EvalPending, 3*h, 10).eval("e2", "web", api.EvalBlocked, 3*h, 11).
				eval("e3", "web", api.EvalComplete, 0, 12),
			"", "", ""},
		{"a purged workload's finished evaluations go at once",
			newCell().eval("e1", "gone", api.EvalComplete, 0, 10).eval("e2", "gone", api.EvalPending, 0, 11),
			"", "e1", ""},
		{"an earlier incarnation's evaluations go, the new one's newest stays",
			newCell().workload("web", 1, 50).eval("e1", "web", api.EvalComplete, 0, 10).eval("e2", "web", api.EvalComplete, 0, 50),
			"", "e1", ""},
		{"finished deployments past retention go, the newest stays (a failed one halts its update)",
			newCell().workload("web", 1, 1).deployment("d1", "web", api.DeploymentSuccessful, 48*h, 10).
				deployment("d2", "web", api.DeploymentFailed, 30*h, 11).deployment("d3", "web", api.DeploymentFailed, 30*h, 12),
			"", "", "d1,d2"},
		{"a running deployment stays",
			newCell().workload("web", 1, 1).deployment("d1", "web", api.DeploymentRunning, 48*h, 10).deployment("d2", "web", api.DeploymentRunning, 48*h, 11),
			"", "", ""},
		{"a deployment within its retention stays",
			newCell().workload("web", 1, 1).deployment("d1", "web", api.DeploymentSuccessful, 2*h, 10).deployment("d2", "web", api.DeploymentRunning, 0, 11),
			"", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := Collect(tt.cell.in, Policy{}, now)
			got := []string{strings.Join(g.Allocs, ","), strings.Join(g.Evals, ","), strings.Join(g.Deployments, ",")}
			want := []string{tt.allocs, tt.evals, tt.d}
			for i, kind := range []string{"allocations", "evaluations", "deployments"} {
				if got[i] != want[i] {
					t.Errorf("%s collected %q, want %q", kind, got[i], want[i])
				}
			}
		})
	}
}

func TestCollectOff(t *testing.T) {
	c := newCell().alloc("a1", "gone", 0, api.AllocComplete, 0, "")
	if g := Collect(c.in, Policy{Off: true}, now); g.Len() != 0 {
		t.Fatalf("collected %+v with gc off", g)
	}
}

func TestPolicyValidate(t *testing.T) {
	if err := (Policy{}).Validate(); err != nil {
		t.Fatal(err)
	}
	if err := (Policy{Evaluations: -time.Second}).Validate(); err == nil || !strings.HasPrefix(err.Error(), "evaluations:") {
		t.Fatalf("negative retention: %v", err)
	}
}
