package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/spec"
)

// The fuzz targets of the API edge: every request decoder of the server,
// each with a seeded corpus in testdata/fuzz/<target>. Their properties:
// no panic; a refusal is a 400 naming at least one field, with printable
// paths; what is accepted keeps its bounds and is accepted again, unchanged,
// when encoded back. FuzzAPI and FuzzHeartbeat drive a real server and
// assert that nothing answers a 5xx.

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
