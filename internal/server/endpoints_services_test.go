package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/fsm"
	"github.com/strata-dev/strata/internal/httpapi/route"
	"github.com/strata-dev/strata/internal/nodeauth"
	"github.com/strata-dev/strata/internal/state"
)

// getServices reads GET path, optionally blocking, and returns the body
// decoded into out and the index.
const servedWorkload = `
apiVersion: strata.dev/v1
kind: Workload
metadata: {name: shop}
spec:
  groups:
    - name: web
      replicas: 2
      ports: [{name: http}]
      services: [{name: shop-web, port: http, tags: [blue]}]
      tasks:
        - name: web
          command: ["/bin/true"]
          checks: [{type: http, port: http, path: /ready}]
`

func getServices(t *testing.T, s *Server, path string, out any) uint64 {
	t.Helper()
	resp, err := http.Get(s.Addr() + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", path, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatal(err)
	}
	idx, _ := strconv.ParseUint(resp.Header.Get(route.IndexHeader), 10, 64)
	return idx
}

func report(t *testing.T, s *Server, nodeID, id, health string) {
	t.Helper()
	body := fmt.Sprintf(`{"updates":[{"id":%q,"clientStatus":"running","health":{"status":%q,"checks":[{"name":"http-0","task":"web","type":"http","purpose":"readiness","status":"passing","output":"HTTP 200"}]}}]}`, id, health)
	if code, _, out := agentRequest(t, s, "POST", "/v1/agent/allocations", body, testAgentHeaders(s, nodeID)); code != http.StatusOK {
		t.Fatalf("report: %d %s", code, out)
	}
}

// TestServiceRegistryFollowsHealth: a placed workload's endpoints appear
// as its allocations report healthy and go when one turns unhealthy; a
// blocking query returns on that change with a higher index.
func TestServiceRegistryFollowsHealth(t *testing.T) {
	s := quietServer(t)
	node := &api.Node{ID: "node-a", Name: "a", Status: api.NodeReady, HTTPAddr: "http://192.0.2.10:4690",
		Capacity: api.Resources{CPUMilli: 8000, MemoryBytes: 8 << 30}}
	key := &state.NodeKey{NodeID: node.ID, Verifier: nodeauth.Verifier(testNodeSecret(node.ID))}
	if _, err := s.propose(&fsm.UpsertNode{Node: node, Key: key}); err != nil {
		t.Fatal(err)
	}
	submit(t, s, servedWorkload)
	waitPlaced(t, s, "shop", 2)
	allocs := s.State().Snapshot().AllocsByWorkload(api.DefaultNamespace, "shop")
	ports := map[int]bool{}
	for _, a := range allocs {
		ports[a.Port("http")] = true
	}
	if len(ports) != 2 || ports[0] {
		t.Fatalf("two allocations on one node got ports %v, want two distinct", ports)
	}

	var eps []api.ServiceEndpoint
	getServices(t, s, "/v1/services/shop-web", &eps)
	if len(eps) != 0 {
		t.Fatalf("endpoints before any health report: %+v", eps)
	}
	report(t, s, "node-a", allocs[0].ID, api.HealthHealthy)
	report(t, s, "node-a", allocs[1].ID, api.HealthHealthy)
	idx := getServices(t, s, "/v1/services/shop-web", &eps)
	if len(eps) != 2 || eps[0].Address != "192.0.2.10" || eps[0].Port != allocs[0].Port("http") && eps[0].Port != allocs[1].Port("http") || eps[0].Tags[0] != "blue" || eps[0].NodeID != "node-a" {
		t.Fatalf("endpoints %+v", eps)
	}

	done := make(chan uint64, 1)
	var after []api.ServiceEndpoint
	go func() { done <- getServices(t, s, fmt.Sprintf("/v1/services/shop-web?index=%d&wait=20s", idx), &after) }()
	select {
	case <-done:
		t.Fatal("the blocking query returned before anything changed")
	case <-time.After(100 * time.Millisecond):
	}
	report(t, s, "node-a", allocs[1].ID, api.HealthUnhealthy)
	var idx2 uint64
	select {
	case idx2 = <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("the blocking query did not return on the change")
	}
	if idx2 <= idx || len(after) != 1 || after[0].AllocID != allocs[0].ID {
		t.Fatalf("after one turned unhealthy: index %d→%d, endpoints %+v", idx, idx2, after)
	}

	var sums []api.ServiceSummary
	getServices(t, s, "/v1/services", &sums)
	if len(sums) != 1 || sums[0].Name != "shop-web" || sums[0].Healthy != 1 || sums[0].Instances != 2 {
		t.Fatalf("services %+v", sums)
	}
	// A service belongs to its workload's namespace: another tenant's
	// listing does not show it.
	getServices(t, s, "/v1/services?namespace=other", &sums)
	getServices(t, s, "/v1/services/shop-web?namespace=other", &eps)
	if len(sums) != 0 || len(eps) != 0 {
		t.Fatalf("namespace other sees services %+v and endpoints %+v of namespace default", sums, eps)
	}
	var evs []*api.Event
	getServices(t, s, "/v1/events?workload=shop", &evs)
	var kinds []string
	for _, e := range evs {
		if e.Type == api.EventAllocHealth || e.Type == api.EventCheck {
			kinds = append(kinds, e.Type+": "+e.Message)
		}
	}
	if !strings.Contains(strings.Join(kinds, "\n"), "is unhealthy") || !strings.Contains(strings.Join(kinds, "\n"), "readiness check http-0 of task web is passing: HTTP 200") {
		t.Fatalf("health events:\n%s", strings.Join(kinds, "\n"))
	}
	waitEvalsSettled(t, s, "shop")
}

func TestHealthReportValidation(t *testing.T) {
	s := quietServer(t)
	if status, er := call(t, s, "POST", "/v1/agent/nodes", nodeJSON(nil)); status != http.StatusOK {
		t.Fatalf("register the reporting node: %d %+v", status, er)
	}
	cases := []struct{ health, field string }{
		{`{"status":"fine"}`, "updates[0].health.status"},
		{`{"status":"healthy","checks":[{"name":"c","type":"grpc","purpose":"readiness","status":"passing"}]}`, "updates[0].health.checks[0].type"},
		{`{"status":"healthy","checks":[{"name":"c","type":"tcp","purpose":"readiness","status":"ok"}]}`, "updates[0].health.checks[0].status"},
		{`{"status":"healthy","checks":[{"name":"","type":"tcp","purpose":"readiness","status":"passing"}]}`, "updates[0].health.checks[0].name"},
		{`{"status":"healthy","reason":"a\u0000b"}`, "updates[0].health.reason"},
	}
	for _, tc := range cases {
		body := fmt.Sprintf(`{"updates":[{"id":"x","clientStatus":"running","health":%s}]}`, tc.health)
		code, er := call(t, s, "POST", "/v1/agent/allocations", body)
		if code != http.StatusBadRequest || er == nil || !strings.Contains(er.Error, tc.field) {
			t.Errorf("health %s: %d %+v; want 400 naming %s", tc.health, code, er, tc.field)
		}
	}
}
