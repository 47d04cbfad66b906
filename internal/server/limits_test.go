package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/strata-dev/strata/api"
)

// TestAdmissionRefusesWhatTheCellCannotHold: the reproducer, one
// POST of replicas: 1000000, is refused under the cell's default bounds
// with a 400 that names the field and the bound, and writes nothing; the
// bounds are the cell's configuration and the namespaces' quotas,
// enforced per namespace and per cell on workloads and on the replicas of
// running workloads.
func TestAdmissionRefusesWhatTheCellCannotHold(t *testing.T) {
	s := quietServer(t)
	before := contentIndex(s)
	status, er := call(t, s, "POST", "/v1/workloads", fmt.Sprintf(largePlanWorkload, "huge", 1_000_000))
	if status != http.StatusBadRequest || er.Code != "limit-exceeded" || len(er.Fields) != 1 || er.Fields[0].Path != "spec.groups[0].replicas" ||
		!strings.Contains(er.Error, fmt.Sprint(api.DefaultCellReplicas)) {
		t.Fatalf("10^6 replicas: %d %+v, want 400 limit-exceeded on spec.groups[0].replicas naming the bound %d", status, er, api.DefaultCellReplicas)
	}
	if contentIndex(s) != before {
		t.Fatal("a refused submission wrote the state")
	}

	// The cell's bounds, set lower.
	if status, er := call(t, s, "PUT", "/v1/cell/config", "apiVersion: strata.dev/v1\nkind: CellConfig\nlimits: {workloads: 3, replicas: 100, namespaceReplicas: 60}\n"); status != http.StatusOK {
		t.Fatalf("set the cell's limits: %d %+v", status, er)
	}
	ns := &api.Namespace{Name: "team", Quota: &api.Quota{Workloads: ptr(int64(1))}}
	if status, er := call(t, s, "PUT", "/v1/namespaces", mustJSON(t, ns)); status != http.StatusOK {
		t.Fatalf("namespace: %d %+v", status, er)
	}
	for _, tc := range []struct {
		name, path, doc string
		field, says     string // "": accepted
	}{
		{"within the namespace's default", "/v1/workloads", fmt.Sprintf(largePlanWorkload, "a", 40), "", ""},
		{"past the namespace's default", "/v1/workloads", fmt.Sprintf(largePlanWorkload, "b", 21), "spec.groups[0].replicas", `namespace "default" would hold 61 replicas of running workloads, above its limit of 60`},
		{"within it again", "/v1/workloads", fmt.Sprintf(largePlanWorkload, "b", 20), "", ""},
		{"the namespace's quota", "/v1/workloads?namespace=team", fmt.Sprintf(largePlanWorkload, "c", 1), "", ""},
		{"past the namespace's quota", "/v1/workloads?namespace=team", fmt.Sprintf(largePlanWorkload, "d", 1), "metadata.name", `namespace "team" would hold 2 workloads, above its limit of 1`},
		{"past the cell's workloads", "/v1/workloads", fmt.Sprintf(largePlanWorkload, "e", 0), "metadata.name", "the cell would hold 4 workloads, above its limit of 3"},
		{"an update that shrinks", "/v1/workloads", fmt.Sprintf(largePlanWorkload, "a", 10), "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			waitBrokerIdle(t, s) // the last accepted one's evaluation has written
			before := contentIndex(s)
			status, er := call(t, s, "POST", tc.path, tc.doc)
			switch {
			case tc.field == "" && status != http.StatusOK:
				t.Fatalf("%d %+v, want accepted", status, er)
			case tc.field != "" && (status != http.StatusBadRequest || len(er.Fields) != 1 || er.Fields[0].Path != tc.field || !strings.Contains(er.Error, tc.says)):
				t.Fatalf("%d %+v, want 400 on %s saying %q", status, er, tc.field, tc.says)
			case tc.field != "" && contentIndex(s) != before:
				t.Fatal("a refused submission wrote the state")
			}
		})
	}
}

// TestLimitsHoldAgainstConcurrentSubmissions: the bound is the FSM's, on
// the entry: of many registrations racing for the last two places, two
// are accepted, whichever they are.
func TestLimitsHoldAgainstConcurrentSubmissions(t *testing.T) {
	s := quietServer(t)
	if status, er := call(t, s, "PUT", "/v1/cell/config", "apiVersion: strata.dev/v1\nkind: CellConfig\nlimits: {workloads: 2}\n"); status != http.StatusOK {
		t.Fatalf("set the cell's limits: %d %+v", status, er)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	accepted, refused := 0, 0
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.Post(s.Addr()+"/v1/workloads", "application/yaml", strings.NewReader(fmt.Sprintf(largePlanWorkload, fmt.Sprint("w", i), 1)))
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			mu.Lock()
			defer mu.Unlock()
			switch resp.StatusCode {
			case http.StatusOK:
				accepted++
			case http.StatusBadRequest:
				refused++
			default:
				t.Errorf("a submission: %s", resp.Status)
			}
		}()
	}
	wg.Wait()
	if n, _ := s.State().Snapshot().WorkloadTally(""); accepted != 2 || refused != 14 || n != 2 {
		t.Fatalf("%d accepted, %d refused, %d stored; want 2, 14 and 2", accepted, refused, n)
	}
}

func ptr[T any](v T) *T { return &v }

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
