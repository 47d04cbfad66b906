package httpapi

import (
	"testing"

	"github.com/strata-dev/strata/api"
)

func TestWorkloadStatus(t *testing.T) {
	wl := func(replicas int, stopped bool) *api.Workload {
		return &api.Workload{Name: "w", Stopped: stopped, Groups: []*api.TaskGroup{{Name: "g", Replicas: replicas}}}
	}
	a := func(client, desired string) *api.Allocation {
		return &api.Allocation{Group: "g", ClientStatus: client, DesiredStatus: desired}
	}
	blocked := &api.Evaluation{Status: api.EvalBlocked, CreateIndex: 5,
		Failures: []api.GroupFailure{{Group: "g", Missing: 1, Summary: "1 nodes: insufficient memory"}}}
	cases := []struct {
		name    string
		w       *api.Workload
		allocs  []*api.Allocation
		evals   []*api.Evaluation
		want    string
		running int
		failure bool
	}{
		{"nothing placed yet", wl(2, false), nil, nil, api.WorkloadPending, 0, false},
		{"all running", wl(2, false), []*api.Allocation{a(api.AllocRunning, api.DesiredRun), a(api.AllocRunning, api.DesiredRun)}, nil, api.WorkloadRunning, 2, false},
		{"one of two does not fit", wl(2, false), []*api.Allocation{a(api.AllocRunning, api.DesiredRun)}, []*api.Evaluation{blocked}, api.WorkloadPartial, 1, true},
		{"lost is not running", wl(1, false), []*api.Allocation{a(api.AllocLost, api.DesiredStop)}, nil, api.WorkloadPending, 0, false},
		{"finished batch", wl(1, false), []*api.Allocation{a(api.AllocComplete, api.DesiredRun)}, nil, api.WorkloadDead, 0, false},
		{"stopped", wl(1, true), []*api.Allocation{a(api.AllocRunning, api.DesiredStop)}, nil, api.WorkloadStopped, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := workloadStatus(tc.w, tc.allocs, tc.evals)
			if st.Status != tc.want || st.Groups[0].Running != tc.running || (st.Groups[0].Failure != nil) != tc.failure {
				t.Fatalf("status %s running %d failure %v; want %s %d %v", st.Status, st.Groups[0].Running, st.Groups[0].Failure != nil, tc.want, tc.running, tc.failure)
			}
		})
	}
}
