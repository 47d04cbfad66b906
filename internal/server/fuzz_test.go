package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/resources"
	"github.com/strata-dev/strata/internal/spec"
)

// The fuzz targets of the API edge: every request decoder of the server,
// each with a seeded corpus in testdata/fuzz/<target>. Their properties:
// no panic; a refusal is a 400 naming at least one field, with printable
// paths; what is accepted keeps its bounds and is accepted again, unchanged,
// when encoded back. FuzzAPI and FuzzHeartbeat drive a real server and
// assert that nothing answers a 5xx.

// checkRefused asserts that err is a 400 of the given code naming fields.
func checkRefused(t *testing.T, err error, code string) {
	t.Helper()
	var he *httpError
	if !errors.As(err, &he) {
		t.Fatalf("refusal %T %v is not an httpError", err, err)
	}
	if he.status != http.StatusBadRequest || he.code != code || len(he.fields) == 0 {
		t.Fatalf("refusal %d %q with %d fields, want 400 %q naming a field: %v", he.status, he.code, len(he.fields), code, err)
	}
	for _, f := range he.fields {
		if f.Message == "" || !printable(f.Path) {
			t.Fatalf("field %q: message %q", f.Path, f.Message)
		}
	}
}

func printable(s string) bool {
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// decodeAndValidate runs a body through the decoder and validator of an
// endpoint.
func decodeAndValidate[T any](body []byte, code string, validate func(*T) error) (*T, error) {
	v := new(T)
	if err := decodeStrict(body, code, v); err != nil {
		return nil, err
	}
	return v, validate(v)
}

// checkRoundTrip encodes an accepted value and asserts the endpoint
// accepts it again as the same value.
func checkRoundTrip[T any](t *testing.T, v *T, code string, validate func(*T) error) {
	t.Helper()
	first, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	again, err := decodeAndValidate(first, code, validate)
	if err != nil {
		t.Fatalf("accepted value refused when sent back: %v\n%s", err, first)
	}
	if second, _ := json.Marshal(again); !bytes.Equal(first, second) {
		t.Fatalf("accepted value changed on the way back:\n%s\n%s", first, second)
	}
}

func FuzzNodeRegistration(f *testing.F) {
	f.Add([]byte(nodeJSON(nil)))
	f.Add([]byte(`{"id": "n1", "name": "n1", "capacity": {"cpuMilli": 9223372036854775807}}`))
	f.Add([]byte(`{"id": "../x", "name": "a\u0000b", "capacity": {"cpuMilli": 1}} trailing`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, body []byte) {
		n, err := decodeAndValidate(body, "invalid-node", validateNode)
		if err != nil {
			checkRefused(t, err, "invalid-node")
			return
		}
		if spec.CheckID(n.ID) != "" || spec.CheckID(n.Name) != "" {
			t.Fatalf("accepted node id %q name %q", n.ID, n.Name)
		}
		if v := resources.OutOfRange(n.Capacity); v != nil || n.Capacity.CPUMilli <= 0 {
			t.Fatalf("accepted capacity %+v", n.Capacity)
		}
		checkRoundTrip(t, n, "invalid-node", validateNode)
	})
}

func FuzzAllocUpdates(f *testing.F) {
	f.Add([]byte(`{"updates": [{"id": "a1", "clientStatus": "running", "taskStates": {"web": {"state": "running", "pid": 7, "restarts": 1}}}]}`))
	f.Add([]byte(`{"updates": [{"id": "a1", "clientStatus": "failed", "clientReason": "exit 1", "taskStates": {"t": {"state": "dead", "exitCode": 1, "failed": true, "finishedAt": "2026-01-02T03:04:05Z"}}}]}`))
	f.Add([]byte(`{"updates": [{"id": "a", "clientStatus": "running", "taskStates": {"t": null}}]}`))
	f.Add([]byte(`{"updates": []} {"updates": []}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := decodeAndValidate(body, "invalid-alloc-update", validateAllocUpdates)
		if err != nil {
			checkRefused(t, err, "invalid-alloc-update")
			return
		}
		for _, u := range req.Updates {
			if u == nil || spec.CheckID(u.ID) != "" {
				t.Fatalf("accepted update %+v", u)
			}
			for name, ts := range u.TaskStates {
				if ts == nil || spec.CheckName(name) != "" {
					t.Fatalf("accepted task state %q: %+v", name, ts)
				}
			}
			(&api.Allocation{TaskStates: u.TaskStates}).Copy() // what the store does with it; must not panic
		}
		checkRoundTrip(t, req, "invalid-alloc-update", validateAllocUpdates)
	})
}

// FuzzQueryParameters reads every query parameter the API knows, the way
// the handlers do.
func FuzzQueryParameters(f *testing.F) {
	for _, q := range []string{"index=12&wait=5s", "index=1&index=2", "wait=-1s", "wait=1000h&index=18446744073709551615",
		"purge=true&follow=false&stream=stderr&offset=10&task=web&workload=w", "workload=Bad_Name&offset=-1", "%zz", "a=%00"} {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		r := &http.Request{URL: &url.URL{RawQuery: raw}}
		index, wait, err := blockingParams(r)
		values, _ := url.ParseQuery(raw)
		if err != nil {
			checkRefused(t, err, "invalid-parameter")
			for _, fe := range err.(*httpError).fields {
				if _, given := values[fe.Path]; !given {
					t.Fatalf("refusal names %q, which the query %q does not hold", fe.Path, raw)
				}
			}
		} else {
			if wait < 0 || wait > maxWait {
				t.Fatalf("wait %v outside 0..%v", wait, maxWait)
			}
			if given, ok := values["index"]; ok {
				if n, _ := strconv.ParseUint(given[0], 10, 64); n != index {
					t.Fatalf("index %q read as %d", given[0], index)
				}
			}
		}
		q := newQuery(r)
		q.boolean("purge")
		q.boolean("follow")
		q.oneOf("stream", "stdout", "stderr")
		q.nonNegative("offset")
		task := q.checked("task", spec.CheckName)
		workload := q.checked("workload", spec.CheckName)
		if err := q.err(); err != nil {
			checkRefused(t, err, "invalid-parameter")
			return
		}
		if spec.CheckName(task) != "" && task != "" || spec.CheckName(workload) != "" && workload != "" {
			t.Fatalf("accepted task %q workload %q", task, workload)
		}
	})
}

// FuzzWorkloadRegistration: the body of POST /v1/workloads as the handler
// reads it (spec.Parse, then the cell's window notices).
func FuzzWorkloadRegistration(f *testing.F) {
	f.Add([]byte(fmt.Sprintf(benchWorkload, "w", 3)))
	f.Add([]byte(overflowWorkload))
	f.Add([]byte(`{"apiVersion": "strata.dev/v1", "kind": "Workload", "metadata": {"name": "w"}, "spec": {"groups": [{"name": "g", "tasks": [{"name": "t", "command": ["x\u0000"]}]}]}}`))
	cfg := &api.CellConfig{TimeWindows: []api.TimeWindow{{Name: "peak-hours", Start: "09:00", End: "18:00"}}}
	f.Fuzz(func(t *testing.T, body []byte) {
		wl, err := spec.Parse(body)
		if err != nil {
			checkRefused(t, specError(err), "invalid-workload")
			return
		}
		for _, n := range windowNotices(wl, cfg) {
			if n.Field == "" || n.Message == "" {
				t.Fatalf("notice %+v", n)
			}
		}
	})
}

// routes the API fuzz targets address, with one fuzzed path parameter.
var fuzzRoutes = []struct{ method, path string }{
	{"POST", "/v1/workloads"}, {"GET", "/v1/workloads"}, {"GET", "/v1/workloads/{}"}, {"DELETE", "/v1/workloads/{}"},
	{"GET", "/v1/workloads/{}/allocations"}, {"GET", "/v1/workloads/{}/evaluations"},
	{"GET", "/v1/nodes"}, {"GET", "/v1/nodes/{}"}, {"GET", "/v1/allocations"}, {"GET", "/v1/allocations/{}"},
	{"GET", "/v1/allocations/{}/logs"}, {"GET", "/v1/evaluations"}, {"GET", "/v1/evaluations/{}"}, {"GET", "/v1/events"},
	{"GET", "/v1/cell/config"}, {"PUT", "/v1/cell/config"},
	{"POST", "/v1/agent/nodes"}, {"PUT", "/v1/agent/nodes/{}/heartbeat"}, {"GET", "/v1/agent/nodes/{}/allocations"},
	{"POST", "/v1/agent/allocations"}, {"GET", "/v1/status/leader"},
}

// fuzzClient does not follow redirects: the router's redirects (paths
// with dot segments) are answers of their own.
func fuzzClient() *http.Client {
	return &http.Client{Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// fuzzCall sends one request to s; it fails the test on a 5xx or an error
// without a JSON body.
func fuzzCall(t *testing.T, client *http.Client, s *Server, method, path, query string, body []byte) (status int, code string) {
	t.Helper()
	u, err := url.Parse(s.Addr() + path)
	if err != nil {
		return 0, "" // not a URL a client could send
	}
	u.RawQuery = query
	req, err := http.NewRequest(method, u.String(), bytes.NewReader(body))
	if err != nil {
		return 0, ""
	}
	for k, v := range testAgentHeaders(s, "node-00000") { // registerNodes' first node
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var er api.ErrorResponse
	switch {
	case resp.StatusCode == http.StatusBadGateway && json.Unmarshal(b, &er) == nil && (er.Code == "agent-unreachable" || er.Code == "agent-unproven"):
		// a log request for a node whose agent address leads nowhere
	case resp.StatusCode >= 500:
		t.Fatalf("%s %s %.200q: %d %s", method, u, body, resp.StatusCode, b)
	case resp.StatusCode >= 400 && (json.Unmarshal(b, &er) != nil || er.Error == "" || er.Code == ""):
		t.Fatalf("%s %s: %d without a JSON error: %s", method, u, resp.StatusCode, b)
	}
	return resp.StatusCode, er.Code
}

// FuzzAPI sends any method, route, path parameter, query and body to a
// real one-server cell (raft, FSM, scheduler): nothing may answer a 5xx,
// every error is a JSON body with a code.
func FuzzAPI(f *testing.F) {
	s := quietServer(f)
	registerNodes(f, s, 2)
	submit(f, s, fmt.Sprintf(benchWorkload, "w", 2))
	client := fuzzClient()
	f.Add(uint8(0), "", "", []byte(fmt.Sprintf(benchWorkload, "f", 1)))
	f.Add(uint8(2), "w", "index=1&wait=10ms", []byte(nil))
	f.Add(uint8(3), "w", "purge=maybe", []byte(nil))
	f.Add(uint8(10), "x", "follow=true&stream=stderr", []byte(nil))
	f.Add(uint8(15), "", "", []byte("apiVersion: strata.dev/v1\nkind: CellConfig\nschedulingPolicy: spread\n"))
	f.Add(uint8(16), "", "", []byte(nodeJSON(nil)))
	f.Add(uint8(17), "node-00001", "", []byte(nil))
	f.Add(uint8(19), "", "", []byte(`{"updates": [{"id": "a", "clientStatus": "running", "taskStates": {"t": null}}]}`))
	f.Add(uint8(13), "", "workload=w&index=1&wait=5ms", []byte(nil))
	f.Fuzz(func(t *testing.T, route uint8, param, query string, body []byte) {
		r := fuzzRoutes[int(route)%len(fuzzRoutes)]
		path := strings.Replace(r.path, "{}", url.PathEscape(param), 1)
		// A blocking read must not stall the fuzzer: every read waits 10ms
		// at most (a query that gives its own wait is refused for giving it
		// twice).
		fuzzCall(t, client, s, r.method, path, query+"&wait=10ms", body)
	})
}

// FuzzHeartbeat sends heartbeats for any node id to a real server: 200 for
// a registered node, 404 node-unknown for an unknown one, 400 naming id for
// one that cannot be an id; never a 5xx.
func FuzzHeartbeat(f *testing.F) {
	s := quietServer(f)
	registerNodes(f, s, 1)
	client := fuzzClient()
	for _, id := range []string{"node-00000", "nope", "../etc", "a\x00b", strings.Repeat("n", 300), "", "%2F"} {
		f.Add(id)
	}
	f.Fuzz(func(t *testing.T, id string) {
		status, code := fuzzCall(t, client, s, "PUT", "/v1/agent/nodes/"+url.PathEscape(id)+"/heartbeat", "", nil)
		switch {
		case status == 0, id == "":
			// not a request a client could send; "" is another route
		case status >= 300 && status < 400, status == http.StatusNotFound && code == "not-found":
			// the router's own answers: a redirect for a path with dot
			// segments (".."), no route for one it cannot split ("%2F")
		case id == "node-00000" && status != http.StatusOK:
			t.Fatalf("heartbeat of a registered node: %d", status)
		case spec.CheckID(id) != "" && status != http.StatusBadRequest:
			t.Fatalf("heartbeat for impossible id %q: %d, want 400", id, status)
		case spec.CheckID(id) == "" && id != "node-00000" && status != http.StatusNotFound:
			t.Fatalf("heartbeat for unknown id %q: %d, want 404", id, status)
		}
	})
}
