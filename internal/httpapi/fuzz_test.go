package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"unicode"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/httpapi/route"
	"github.com/strata-dev/strata/internal/resources"
	"github.com/strata-dev/strata/internal/spec"
)

// The fuzz targets of the API's request decoders, each with a seeded
// corpus in testdata/fuzz/<target>. Their properties: no panic; a refusal
// is a 400 naming at least one field, with printable paths; what is
// accepted keeps its bounds and is accepted again, unchanged, when
// encoded back. FuzzAPI and FuzzHeartbeat (internal/server) drive a real
// server and assert that nothing answers a 5xx.

// checkRefused asserts that err is a 400 of the given code naming fields.
func checkRefused(t *testing.T, err error, code string) {
	t.Helper()
	var he *route.Error
	if !errors.As(err, &he) {
		t.Fatalf("refusal %T %v is not a route.Error", err, err)
	}
	if he.Status != http.StatusBadRequest || he.Code != code || len(he.Fields) == 0 {
		t.Fatalf("refusal %d %q with %d fields, want 400 %q naming a field: %v", he.Status, he.Code, len(he.Fields), code, err)
	}
	for _, f := range he.Fields {
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
	if err := route.DecodeStrict(body, code, v); err != nil {
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
	f.Add([]byte(`{"id":"node-1","name":"n1","httpAddr":"http://127.0.0.1:4690","labels":{"rack":"r1"},"capacity":{"cpuMilli":4000,"memoryBytes":8589934592,"gpus":1},"numa":[{"id":0,"cpus":[0,1,2,3],"memoryBytes":8589934592}],"gpus":[{"id":"0","model":"A100","numa":0}]}`))
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
		index, wait, err := route.BlockingParams(r)
		values, _ := url.ParseQuery(raw)
		if err != nil {
			checkRefused(t, err, "invalid-parameter")
			for _, fe := range err.(*route.Error).Fields {
				if _, given := values[fe.Path]; !given {
					t.Fatalf("refusal names %q, which the query %q does not hold", fe.Path, raw)
				}
			}
		} else {
			if wait < 0 || wait > route.MaxWait {
				t.Fatalf("wait %v outside 0..%v", wait, route.MaxWait)
			}
			if given, ok := values["index"]; ok {
				if n, _ := strconv.ParseUint(given[0], 10, 64); n != index {
					t.Fatalf("index %q read as %d", given[0], index)
				}
			}
		}
		q := route.NewQuery(r)
		q.Boolean("purge")
		q.Boolean("follow")
		q.OneOf("stream", "stdout", "stderr")
		q.NonNegative("offset")
		task := q.Checked("task", spec.CheckName)
		workload := q.Checked("workload", spec.CheckName)
		if err := q.Err(); err != nil {
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
	f.Add([]byte("apiVersion: strata.dev/v1\nkind: Workload\nmetadata: {name: w}\nspec:\n  groups:\n    - name: web\n      replicas: 3\n      tasks:\n        - {name: t, driver: mock, command: [x], resources: {cpu: 250m, memory: 256Mi}}\n"))
	f.Add([]byte("apiVersion: strata.dev/v1\nkind: Workload\nmetadata: {name: overflow}\nspec:\n  groups:\n    - name: g\n      tasks:\n        - {name: a, driver: mock, command: [x], resources: {cpu: 9223372036854775807m, memory: 9223372036854775807}}\n"))
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
