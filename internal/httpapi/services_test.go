package httpapi

import (
	"fmt"
	"strings"
	"testing"

	"github.com/strata-dev/strata/api"
)

func TestServiceEndpoints(t *testing.T) {
	tg := &api.TaskGroup{Name: "g", Ports: []api.PortRequest{{Name: "http"}},
		Services: []api.Service{{Name: "web", Port: "http", Tags: []string{"v1"}, Labels: map[string]string{"team": "a"}}, {Name: "other", Port: "http"}}}
	alloc := func(id, node, health, desired string) *api.Allocation {
		a := &api.Allocation{ID: id, Workload: "w", Group: "g", NodeID: node, NodeName: node, TaskGroup: tg,
			DesiredStatus: desired, ClientStatus: api.AllocRunning,
			Assignment: api.Assignment{NUMANode: -1, Ports: []api.AssignedPort{{Name: "http", Port: 20000}}}}
		if health != "" {
			a.Health = &api.AllocHealth{Status: health}
		}
		return a
	}
	noPort := alloc("e-noport", "n1", api.HealthHealthy, api.DesiredRun)
	noPort.Assignment.Ports = nil
	allocs := []*api.Allocation{
		alloc("c-healthy", "n2", api.HealthHealthy, api.DesiredRun),
		alloc("a-healthy", "n1", api.HealthHealthy, api.DesiredRun),
		alloc("b-pending", "n1", api.HealthPending, api.DesiredRun),
		alloc("d-unhealthy", "n1", api.HealthUnhealthy, api.DesiredRun),
		alloc("f-stopping", "n1", api.HealthHealthy, api.DesiredStop),
		alloc("g-unreported", "n1", "", api.DesiredRun),
		alloc("h-on-a-down-node", "n3", api.HealthHealthy, api.DesiredRun),
		noPort,
	}
	nodes := map[string]*api.Node{"n1": {ID: "n1", HTTPAddr: "http://10.0.0.1:4690"}, "n2": {ID: "n2", HTTPAddr: "http://0.0.0.0:4690"},
		"n3": {ID: "n3", HTTPAddr: "http://10.0.0.3:4690", Status: api.NodeDown}}
	got := serviceEndpoints("web", allocs, func(id string) *api.Node { return nodes[id] })
	want := []string{"a-healthy 10.0.0.1:20000 [v1] map[team:a]", "c-healthy :20000 [v1] map[team:a]"}
	var gotText []string
	for _, e := range got {
		gotText = append(gotText, fmt.Sprintf("%s %s:%d %v %v", e.AllocID, e.Address, e.Port, e.Tags, e.Labels))
	}
	if strings.Join(gotText, "; ") != strings.Join(want, "; ") {
		t.Fatalf("endpoints %q, want %q", gotText, want)
	}
	if e := serviceEndpoints("nobody", allocs, func(string) *api.Node { return nil }); e == nil || len(e) != 0 {
		t.Fatalf("unknown service: %v, want an empty list", e)
	}
	sums := listServices(allocs, func(id string) *api.Node { return nodes[id] })
	if len(sums) != 2 || sums[0].Name != "other" || sums[1].Name != "web" || sums[1].Healthy != 2 || sums[1].Instances != 7 {
		t.Fatalf("summaries %+v", sums)
	}
}
