package cli

import (
	"bytes"
	"testing"

	"github.com/strata-dev/strata/api"
)

func TestPrintStartingTasks(t *testing.T) {
	alloc := func(id, desired, status string, tasks map[string]*api.TaskState) *api.Allocation {
		return &api.Allocation{ID: id, NodeName: "n1", DesiredStatus: desired, ClientStatus: status, TaskStates: tasks}
	}
	pulling := &api.TaskState{State: api.TaskPending, Message: "pulling image r:1: 1/2 layers, 1.0MiB/2.0MiB"}
	for _, c := range []struct {
		name   string
		allocs []*api.Allocation
		want   string
	}{
		{"nothing starting prints nothing", []*api.Allocation{
			alloc("a1", api.DesiredRun, api.AllocRunning, map[string]*api.TaskState{"t": {State: api.TaskRunning}}),
		}, ""},
		{"a pull in progress", []*api.Allocation{
			alloc("a1234567890", api.DesiredRun, api.AllocPending, map[string]*api.TaskState{"engine": pulling, "side": {State: api.TaskPending}}),
		}, "\nStarting tasks:\n  a1234567 engine on n1: pulling image r:1: 1/2 layers, 1.0MiB/2.0MiB\n"},
		{"stopped allocations are not starting", []*api.Allocation{
			alloc("a1", api.DesiredStop, api.AllocPending, map[string]*api.TaskState{"engine": pulling}),
			alloc("a2", api.DesiredRun, api.AllocFailed, map[string]*api.TaskState{"engine": pulling}),
		}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			printStartingTasks(&b, c.allocs)
			if b.String() != c.want {
				t.Fatalf("got %q, want %q", b.String(), c.want)
			}
		})
	}
}
