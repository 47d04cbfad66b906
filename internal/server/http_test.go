package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/httpapi/route"
)

// TestBlockingQueryTimeoutReturnsFullList: an agent's watch that times out
// must still get the node's whole allocation list (an empty answer would
// tell the agent to stop everything).
func TestBlockingQueryTimeoutReturnsFullList(t *testing.T) {
	s := quietServer(t)
	registerNodes(t, s, 2) // the workload avoids rack r0: all three land on node-00001
	submit(t, s, fmt.Sprintf(benchWorkload, "w", 3))
	waitPlaced(t, s, "w", 3)
	get := func(query string) ([]*api.Allocation, uint64, time.Duration) {
		start := time.Now()
		req, err := http.NewRequest("GET", s.Addr()+"/v1/agent/nodes/node-00001/allocations"+query, nil)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range testAgentHeaders(s, "node-00001") {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out []*api.Allocation
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
		idx, _ := strconv.ParseUint(resp.Header.Get(route.IndexHeader), 10, 64)
		return out, idx, time.Since(start)
	}
	first, idx, _ := get("")
	if len(first) != 3 || idx == 0 {
		t.Fatalf("plain read: %d allocations, index %d", len(first), idx)
	}
	again, idx2, took := get(fmt.Sprintf("?index=%d&wait=200ms", idx))
	if len(again) != 3 || idx2 != idx || took < 150*time.Millisecond {
		t.Fatalf("timed-out blocking read: %d allocations, index %d→%d, after %v", len(again), idx, idx2, took)
	}
}

func TestUnknownNamesAndBadParams(t *testing.T) {
	s := quietServer(t)
	cases := []struct {
		path string
		want int
	}{
		{"/v1/workloads/nope", http.StatusNotFound},
		{"/v1/allocations/nope", http.StatusNotFound},
		{"/v1/nodes/nope", http.StatusNotFound},
		{"/v1/nosuch", http.StatusNotFound},
		{"/v1/nodes?index=abc", http.StatusBadRequest},
		{"/v1/nodes?index=1&wait=soon", http.StatusBadRequest},
	}
	for _, tc := range cases {
		resp, err := http.Get(s.Addr() + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		var er api.ErrorResponse
		json.NewDecoder(resp.Body).Decode(&er)
		resp.Body.Close()
		if resp.StatusCode != tc.want || er.Error == "" {
			t.Errorf("GET %s: %d %+v, want %d with a JSON error", tc.path, resp.StatusCode, er, tc.want)
		}
	}
}
