package ui_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
)

// The long lists the UI reads (GET /v1/allocations?stub=true, GET
// /v1/nodes?stub=true) say the same as the full lists, line for line, and
// come unindented; a blocking query on them waits like any other.
func TestStubListsMatchFullLists(t *testing.T) {
	c := startCell(t, 12, nil)
	cl := c.Client()
	ctx := context.Background()
	if _, err := cl.RegisterWorkload(ctx, []byte(strings.Replace(webSpec, "replicas: 30", "replicas: 7", 1))); err != nil {
		t.Fatal(err)
	}
	var full []*api.Allocation
	deadline := time.Now().Add(20 * time.Second)
	for len(full) < 7 {
		if time.Now().After(deadline) {
			t.Fatalf("7 allocations not placed: %d", len(full))
		}
		time.Sleep(50 * time.Millisecond)
		var err error
		if full, _, err = cl.Allocations(ctx, "", nil); err != nil {
			t.Fatal(err)
		}
	}

	body, index := read(t, c.Addr(0)+"/v1/allocations?stub=true")
	if strings.Contains(body, "\n  ") {
		t.Fatalf("the allocation table is indented")
	}
	var table api.AllocationTable
	if err := json.Unmarshal([]byte(body), &table); err != nil {
		t.Fatal(err)
	}
	want := map[string]api.AllocationStub{}
	for _, a := range full {
		s := a.Stub()
		s.CreateTime = s.CreateTime.Truncate(time.Millisecond).UTC() // the table's precision
		want[a.ID] = s
	}
	if len(table.Stubs) != len(want) {
		t.Fatalf("%d stubs, %d allocations", len(table.Stubs), len(want))
	}
	for _, s := range table.Stubs {
		if w, ok := want[s.ID]; !ok || w != s {
			t.Fatalf("stub %+v, allocation says %+v", s, w)
		}
	}

	nodesBody, _ := read(t, c.Addr(0)+"/v1/nodes?stub=true")
	var stubs []api.NodeStub
	if err := json.Unmarshal([]byte(nodesBody), &stubs); err != nil {
		t.Fatal(err)
	}
	nodes, _, err := cl.Nodes(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(stubs) != len(nodes) || len(stubs) != 12 {
		t.Fatalf("%d node stubs, %d nodes", len(stubs), len(nodes))
	}
	for i, n := range nodes {
		w, _ := json.Marshal(n.Stub())
		g, _ := json.Marshal(stubs[i])
		if string(w) != string(g) {
			t.Fatalf("node stub %s, node says %s", g, w)
		}
	}

	// A blocking read of the table waits for a change.
	start := time.Now()
	read(t, c.Addr(0)+"/v1/allocations?stub=true&wait=300ms&index="+index)
	if waited := time.Since(start); waited < 250*time.Millisecond {
		t.Fatalf("a blocking read of the table answered after %s without a change", waited)
	}
}

func read(t *testing.T, url string) (body, index string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %v %s", url, resp.Status, err, b)
	}
	return string(b), resp.Header.Get("X-Strata-Index")
}
