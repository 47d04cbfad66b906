package server

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/strata-dev/strata/api"
)

// call sends one request and returns the status and, for an error, the
// decoded error body.
func call(t *testing.T, s *Server, method, path, body string) (int, *api.ErrorResponse) {
	t.Helper()
	req, err := http.NewRequest(method, s.Addr()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range testAgentHeaders(s, "node-1") { // nodeJSON's node
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode < 300 {
		return resp.StatusCode, nil
	}
	var er api.ErrorResponse
	if err := json.Unmarshal(b, &er); err != nil || er.Error == "" || er.Code == "" {
		t.Fatalf("%s %s: %d with a body that is not a JSON error: %q", method, path, resp.StatusCode, b)
	}
	return resp.StatusCode, &er
}

func fieldPaths(er *api.ErrorResponse) []string {
	var out []string
	for _, f := range er.Fields {
		out = append(out, f.Path)
	}
	return out
}

// wantRefused asserts a 400 whose fields name exactly paths.
func wantRefused(t *testing.T, s *Server, method, path, body string, paths ...string) *api.ErrorResponse {
	t.Helper()
	status, er := call(t, s, method, path, body)
	if status != http.StatusBadRequest {
		t.Fatalf("%s %s %.80q: status %d, want 400 (%+v)", method, path, body, status, er)
	}
	if got := fieldPaths(er); !slices.Equal(got, paths) {
		t.Fatalf("%s %s %.80q: fields %q, want %q (%s)", method, path, body, got, paths, er.Error)
	}
	return er
}

const overflowWorkload = `
apiVersion: strata.dev/v1
kind: Workload
metadata: {name: overflow}
spec:
  groups:
    - name: g
      tasks:
        - {name: a, driver: mock, command: [x], resources: {cpu: 9223372036854775807m, memory: 9223372036854775807B}}
        - {name: b, driver: mock, command: [x], resources: {cpu: 9223372036854775807m, memory: 9223372036854775807B}}
`

// Issue 7, defect 3, at the API edge: the two tasks whose sum wrapped to
// -2 are refused, naming each field, and nothing is written.
func TestOverflowingWorkloadIsRefused(t *testing.T) {
	s := quietServer(t)
	registerNodes(t, s, 1)
	before := s.State().Snapshot().Index()
	wantRefused(t, s, "POST", "/v1/workloads", overflowWorkload,
		"spec.groups[0].tasks[0].resources.cpu", "spec.groups[0].tasks[0].resources.memory",
		"spec.groups[0].tasks[1].resources.cpu", "spec.groups[0].tasks[1].resources.memory")
	if snap := s.State().Snapshot(); snap.Index() != before || snap.Workload("", "overflow") != nil {
		t.Fatal("a refused workload wrote something")
	}
}

func nodeJSON(mutate func(n map[string]any)) string {
	n := map[string]any{"id": "node-1", "name": "n1", "httpAddr": "http://127.0.0.1:4690",
		"labels":   map[string]string{"rack": "r1"},
		"capacity": map[string]any{"cpuMilli": 4000, "memoryBytes": 8 << 30, "gpus": 1},
		"numa":     []map[string]any{{"id": 0, "cpus": []int{0, 1, 2, 3}, "memoryBytes": 8 << 30}},
		"gpus":     []map[string]any{{"id": "0", "model": "A100", "numa": 0}}}
	if mutate != nil {
		mutate(n)
	}
	b, _ := json.Marshal(n)
	return string(b)
}

// Issue 7, defects 3 and 10, for node registration: ids with "../", NUL or
// 1 MiB long, unbounded capacities, null and trailing garbage.
func TestNodeRegistrationIsValidated(t *testing.T) {
	s := quietServer(t)
	set := func(k string, v any) func(map[string]any) { return func(n map[string]any) { n[k] = v } }
	capacity := func(k string, v any) func(map[string]any) {
		return func(n map[string]any) { n["capacity"].(map[string]any)[k] = v }
	}
	tests := []struct {
		name  string
		body  string
		paths []string
	}{
		{"id with ../", nodeJSON(set("id", "../../etc")), []string{"id"}},
		{"id with NUL", nodeJSON(set("id", "a\x00b")), []string{"id"}},
		{"id of 1 MiB", nodeJSON(set("id", strings.Repeat("a", 1<<20))), []string{"id"}},
		{"id missing", nodeJSON(func(n map[string]any) { delete(n, "id") }), []string{"id"}},
		{"name with a slash", nodeJSON(set("name", "a/b")), []string{"name"}},
		{"cpu at int64's edge", nodeJSON(capacity("cpuMilli", int64(9223372036854775807))), []string{"capacity.cpuMilli"}},
		{"memory above the maximum", nodeJSON(capacity("memoryBytes", int64(1<<50+1))), []string{"capacity.memoryBytes"}},
		{"negative disk", nodeJSON(capacity("diskBytes", -1)), []string{"capacity.diskBytes"}},
		{"gpus above the maximum", nodeJSON(func(n map[string]any) { capacity("gpus", 5000)(n); delete(n, "gpus") }), []string{"capacity.gpus"}},
		{"gpus listed and counted differently", nodeJSON(capacity("gpus", 2)), []string{"gpus"}},
		{"bandwidth above the maximum", nodeJSON(capacity("netMbps", int64(2e9))), []string{"capacity.netMbps"}},
		{"a capacity share", nodeJSON(capacity("gpuMilli", 500)), []string{"capacity.gpuMilli"}},
		{"bad label key", nodeJSON(set("labels", map[string]string{"-x": "y"})), []string{`labels["-x"]`}},
		{"bad label value", nodeJSON(set("labels", map[string]string{"rack": "r 1"})), []string{"labels.rack"}},
		{"agent address not http", nodeJSON(set("httpAddr", "file:///etc/passwd")), []string{"httpAddr"}},
		{"numa cpu negative", nodeJSON(set("numa", []map[string]any{{"id": 0, "cpus": []int{-1}}})), []string{"numa[0].cpus[0]"}},
		{"numa cpu twice", nodeJSON(set("numa", []map[string]any{{"id": 0, "cpus": []int{1}}, {"id": 1, "cpus": []int{1}}})), []string{"numa[1].cpus[0]"}},
		{"numa memory above the maximum", nodeJSON(set("numa", []map[string]any{{"id": 0, "memoryBytes": int64(1<<50 + 1)}})), []string{"numa[0].memoryBytes"}},
		{"numa tier unknown", nodeJSON(set("numa", []map[string]any{{"id": 0, "cpus": []int{0}}, {"id": 1, "tier": "fast"}})), []string{"numa[1].tier"}},
		{"huge pages not whole pages", nodeJSON(capacity("hugePages2MiBytes", 3<<20)), []string{"capacity.hugePages2MiBytes"}},
		{"negative 1Gi huge pages", nodeJSON(capacity("hugePages1GiBytes", -(1 << 30))), []string{"capacity.hugePages1GiBytes"}},
		{"gpu id with NUL", nodeJSON(set("gpus", []map[string]any{{"id": "0\x00", "model": "A100", "numa": 0}})), []string{"gpus[0].id"}},
		{"gpu ids twice", nodeJSON(func(n map[string]any) {
			capacity("gpus", 2)(n)
			set("gpus", []map[string]any{{"id": "0", "numa": 0}, {"id": "0", "numa": 0}})(n)
		}), []string{"gpus[1].id"}},
		{"gpu numa below -1", nodeJSON(set("gpus", []map[string]any{{"id": "0", "numa": -2}})), []string{"gpus[0].numa"}},
		{"driver name with a slash", nodeJSON(set("drivers", []string{"exec", "../containerd"})), []string{"drivers[1]"}},
		{"too many drivers", nodeJSON(set("drivers", make([]string, 33))), []string{"drivers"}},
		{"dynamic port range upside down", nodeJSON(set("dynamicPorts", map[string]int{"min": 30000, "max": 20000})), []string{"dynamicPorts"}},
		{"dynamic port range past 65535", nodeJSON(set("dynamicPorts", map[string]int{"min": 60000, "max": 70000})), []string{"dynamicPorts"}},
		{"null", `null`, []string{""}},
		{"trailing garbage", nodeJSON(nil) + `garbage`, []string{""}},
		{"unknown field", nodeJSON(set("cpus", 4)), []string{"cpus"}},
		{"type error deep inside", nodeJSON(set("gpus", []map[string]any{{"id": 0}})), []string{"gpus[0].id"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantRefused(t, s, "POST", "/v1/agent/nodes", tt.body, tt.paths...)
		})
	}
	if status, er := call(t, s, "POST", "/v1/agent/nodes", nodeJSON(nil)); status != http.StatusOK {
		t.Fatalf("a valid node: %d %+v", status, er)
	}
	if snap := s.State().Snapshot(); len(snap.Nodes()) != 1 {
		t.Fatalf("%d nodes stored, want only the valid one", len(snap.Nodes()))
	}
}

// Issue 7, defect 10, for agent reports: null, trailing garbage, and the
// reports' own fields. The reporting node is registered first: a report
// that does not prove its node is refused before its body is read.
func TestAllocUpdatesAreValidated(t *testing.T) {
	s := quietServer(t)
	if status, er := call(t, s, "POST", "/v1/agent/nodes", nodeJSON(nil)); status != http.StatusOK {
		t.Fatalf("register the reporting node: %d %+v", status, er)
	}
	update := func(u string) string { return `{"updates": [` + u + `]}` }
	tests := []struct {
		name  string
		body  string
		paths []string
	}{
		{"null", `null`, []string{""}},
		{"empty body", ``, []string{""}},
		{"trailing garbage", update(`{"id": "a", "clientStatus": "running"}`) + ` {"updates": []}`, []string{""}},
		{"updates missing", `{}`, []string{"updates"}},
		{"updates null", `{"updates": null}`, []string{"updates"}},
		{"an update null", update(`null`), []string{"updates[0]"}},
		{"id with NUL", update(`{"id": "a\u0000", "clientStatus": "running"}`), []string{"updates[0].id"}},
		{"id of 100 KiB", update(`{"id": "` + strings.Repeat("a", 100<<10) + `", "clientStatus": "running"}`), []string{"updates[0].id"}},
		{"unknown status", update(`{"id": "a", "clientStatus": "exploded"}`), []string{"updates[0].clientStatus"}},
		{"the same allocation twice", update(`{"id": "a", "clientStatus": "running"}, {"id": "a", "clientStatus": "failed"}`), []string{"updates[1].id"}},
		{"task state null", update(`{"id": "a", "clientStatus": "running", "taskStates": {"t": null}}`), []string{"updates[0].taskStates.t"}},
		{"task name invalid", update(`{"id": "a", "clientStatus": "running", "taskStates": {"T/..": {"state": "running"}}}`), []string{`updates[0].taskStates["T/.."]`}},
		{"task state unknown", update(`{"id": "a", "clientStatus": "running", "taskStates": {"t": {"state": "zombie"}}}`), []string{"updates[0].taskStates.t.state"}},
		{"negative restarts", update(`{"id": "a", "clientStatus": "running", "taskStates": {"t": {"state": "running", "restarts": -1}}}`), []string{"updates[0].taskStates.t.restarts"}},
		{"reason with NUL", update(`{"id": "a", "clientStatus": "failed", "clientReason": "x\u0000"}`), []string{"updates[0].clientReason"}},
		{"unknown field", update(`{"id": "a", "clientStatus": "running", "exitCode": 3}`), []string{"updates[0].exitCode"}},
		{"wrong type", update(`{"id": "a", "clientStatus": 3}`), []string{"updates[0].clientStatus"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantRefused(t, s, "POST", "/v1/agent/allocations", tt.body, tt.paths...)
		})
	}
	if status, er := call(t, s, "POST", "/v1/agent/allocations", update(`{"id": "unknown-alloc", "clientStatus": "running"}`)); status != http.StatusOK {
		t.Fatalf("a valid report: %d %+v", status, er)
	}
}

// Issue 7, defect 10: unknown names answered 200 [] on some endpoints. A
// name nothing refers to is a 404; a name that cannot exist is a 400.
func TestUnknownNamesAre404(t *testing.T) {
	s := quietServer(t)
	for _, path := range []string{
		"/v1/workloads/nope",
		"/v1/workloads/nope/allocations",
		"/v1/workloads/nope/evaluations",
		"/v1/allocations?workload=nope",
		"/v1/events?workload=nope",
		"/v1/agent/nodes/nope/allocations",
		"/v1/nodes/nope",
		"/v1/allocations/nope",
		"/v1/allocations/nope/logs",
		"/v1/evaluations/nope",
	} {
		if status, er := call(t, s, "GET", path, ""); status != http.StatusNotFound {
			t.Errorf("GET %s: %d %+v, want 404", path, status, er)
		}
	}
	for _, req := range []struct{ method, path string }{
		{"DELETE", "/v1/workloads/nope"},
		{"PUT", "/v1/agent/nodes/nope/heartbeat"},
	} {
		if status, er := call(t, s, req.method, req.path, ""); status != http.StatusNotFound {
			t.Errorf("%s %s: %d %+v, want 404", req.method, req.path, status, er)
		}
	}
}

// Path and query parameters are checked like body fields: the parameter is
// named in fields.
func TestPathAndQueryParameters(t *testing.T) {
	s := quietServer(t)
	tests := []struct {
		method, path string
		field        string
	}{
		{"GET", "/v1/workloads/Bad_Name", "name"},
		{"GET", "/v1/workloads/" + strings.Repeat("a", 64), "name"},
		{"GET", "/v1/workloads/a%00b/evaluations", "name"},
		{"DELETE", "/v1/workloads/a%2F..", "name"},
		{"GET", "/v1/nodes/..%2F..%2Fetc", "id"},
		{"GET", "/v1/nodes/a%00b", "id"},
		{"PUT", "/v1/agent/nodes/a%00b/heartbeat", "id"},
		{"GET", "/v1/agent/nodes/" + strings.Repeat("n", 300) + "/allocations", "id"},
		{"GET", "/v1/allocations/a%00", "id"},
		{"GET", "/v1/evaluations/a%20b", "id"},
		{"GET", "/v1/allocations/x/logs?stream=stdin", "stream"},
		{"GET", "/v1/allocations/x/logs?follow=yes", "follow"},
		{"GET", "/v1/allocations/x/logs?offset=-1", "offset"},
		{"GET", "/v1/allocations?workload=Bad_Name", "workload"},
		{"GET", "/v1/events?workload=a%00", "workload"},
		{"GET", "/v1/nodes?index=abc", "index"},
		{"GET", "/v1/nodes?index=18446744073709551616", "index"},
		{"GET", "/v1/nodes?index=1&index=2", "index"},
		{"GET", "/v1/nodes?index=1&wait=soon", "wait"},
		{"GET", "/v1/nodes?index=1&wait=-1s", "wait"},
		{"DELETE", "/v1/workloads/w?purge=yes", "purge"},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			er := wantRefused(t, s, tt.method, tt.path, "", tt.field)
			if strings.ContainsRune(er.Error, 0) {
				t.Fatalf("the error echoes a raw NUL: %q", er.Error)
			}
		})
	}
}

// A body is refused before anything is proposed, however it fails.
func TestRefusedBodiesWriteNothing(t *testing.T) {
	s := quietServer(t)
	before := s.State().Snapshot().Index()
	for _, body := range []string{`null`, `{"id": "x"} {}`, `[]`, `{"id": "n", "name": "n", "capacity": {"cpuMilli": -5}}`} {
		call(t, s, "POST", "/v1/agent/nodes", body)
		call(t, s, "POST", "/v1/agent/allocations", body)
	}
	call(t, s, "PUT", "/v1/cell/config", "apiVersion: strata.dev/v1\nkind: CellConfig\nschedulingPolicy: \"spread\\0\"\n")
	if after := s.State().Snapshot().Index(); after != before {
		t.Fatalf("refused bodies moved the index %d → %d", before, after)
	}
}
