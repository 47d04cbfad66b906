package agent

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/nodeauth"
)

// signedRequest is a GET of url signed as the cell's server signs it for
// ag's node (an agent serves logs to nothing else).
func signedRequest(t *testing.T, ag *Agent, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	nonce := nodeauth.NewNonce(time.Now())
	req.Header.Set(nodeauth.HeaderNonce, nonce)
	req.Header.Set(nodeauth.HeaderSignature, nodeauth.SignRequest(nodeauth.Verifier(ag.nodeSecret), nonce, req.URL.RequestURI()))
	return req
}

func get(t *testing.T, ag *Agent, url string) (int, string) {
	t.Helper()
	client := &http.Client{Timeout: 20 * time.Second}
	resp, err := client.Do(signedRequest(t, ag, url))
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read %s: %v", url, err)
	}
	return resp.StatusCode, string(body)
}

// TestLogsRotateAndStream writes enough output to rotate several times
// under a 1KiB bound and reads it back over HTTP across the rotated files.
func TestLogsRotateAndStream(t *testing.T) {
	needCgroups(t)
	t.Parallel()
	srv := newFakeServer()
	ag := startAgent(t, srv, t.TempDir(), func(c *Config) { c.LogMaxBytes, c.LogMaxFiles = 1024, 3 })
	alloc := newAlloc(ag.NodeID()).
		task("chatty", api.Resources{}, "sh", "-c", `i=0; while [ $i -lt 500 ]; do echo "line $i"; i=$((i+1)); done; echo oops >&2`).build()
	srv.put(alloc)
	waitTask(t, srv, alloc.ID, "chatty", "task done", func(_ *api.AllocUpdate, ts *api.TaskState) bool { return ts.State == api.TaskDead })

	dir := filepath.Join(ag.cfg.DataDir, "allocs", alloc.ID, "chatty")
	for _, name := range []string{"stdout.log", "stdout.log.1", "stdout.log.2"} {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if st.Size() > 1024 {
			t.Errorf("%s: size %d, want <= 1024", name, st.Size())
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "stdout.log.3")); !os.IsNotExist(err) {
		t.Errorf("more than 3 files kept")
	}

	base := srv.node(ag.NodeID()).HTTPAddr + "/v1/agent/allocations/" + alloc.ID + "/logs"
	code, body := get(t, ag.Agent, base+"?task=chatty&stream=stdout")
	if code != http.StatusOK || !strings.HasSuffix(body, "line 498\nline 499\n") || len(body) <= 2048 {
		t.Fatalf("stdout: %d, %d bytes, tail %q", code, len(body), body[max(0, len(body)-30):])
	}
	// Rotation only drops whole old files: what is kept is contiguous.
	lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
	var first int
	fmt.Sscanf(lines[1], "line %d", &first)
	for i, l := range lines[1:] {
		if want := fmt.Sprintf("line %d", first+i); l != want {
			t.Fatalf("line %d = %q, want %q: rotated files read out of order", i+1, l, want)
		}
	}
	if _, body2 := get(t, ag.Agent, base+"?task=chatty&stream=stdout&offset=100"); body2 != body[100:] {
		t.Errorf("offset=100 returned %d bytes, want %d", len(body2), len(body)-100)
	}
	if code, body := get(t, ag.Agent, base+"?task=chatty&stream=stderr&follow=true"); code != 200 || body != "oops\n" {
		t.Errorf("stderr follow of a dead task = %d %q", code, body)
	}
}

func TestLogsFollowRunningTask(t *testing.T) {
	needCgroups(t)
	t.Parallel()
	srv := newFakeServer()
	dataDir := t.TempDir()
	ag := startAgent(t, srv, dataDir)
	// The gate lives in the task's own directory, which an isolated task sees.
	alloc := newAlloc(ag.NodeID()).
		task("slow", api.Resources{}, "sh", "-c", `echo first; while [ ! -e "$STRATA_TASK_DIR/gate" ]; do sleep 0.02; done; echo second`).build()
	gate := filepath.Join(dataDir, "allocs", alloc.ID, "slow", "local", "gate")
	srv.put(alloc)
	waitTask(t, srv, alloc.ID, "slow", "task running", running)

	url := srv.node(ag.NodeID()).HTTPAddr + "/v1/agent/allocations/" + alloc.ID + "/logs?follow=true"
	resp, err := http.DefaultClient.Do(signedRequest(t, ag.Agent, url))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, len("first\n"))
	if _, err := io.ReadFull(resp.Body, buf); err != nil || string(buf) != "first\n" {
		t.Fatalf("first chunk %q, %v", buf, err)
	}
	os.WriteFile(gate, nil, 0o644)
	rest, err := io.ReadAll(resp.Body) // ends once the task is dead and fully read
	if err != nil || string(rest) != "second\n" {
		t.Fatalf("rest of follow = %q, %v", rest, err)
	}
}

func TestLogsErrors(t *testing.T) {
	t.Parallel()
	srv := newFakeServer()
	ag := startAgent(t, srv, t.TempDir())
	alloc := newAlloc(ag.NodeID()).mockTask("a", nil).mockTask("b", nil).build()
	srv.put(alloc)
	waitTask(t, srv, alloc.ID, "a", "mock running", func(u *api.AllocUpdate, _ *api.TaskState) bool { return u.ClientStatus == api.AllocRunning })
	addr := srv.node(ag.NodeID()).HTTPAddr
	for _, tc := range []struct {
		path string
		code int
		msg  string
	}{
		{"/v1/agent/allocations/nope/logs?task=a", 404, `unknown allocation "nope"`},
		{"/v1/agent/allocations/" + alloc.ID + "/logs?task=zzz", 404, `has no task "zzz"`},
		{"/v1/agent/allocations/" + alloc.ID + "/logs", 404, `has no task ""`}, // two tasks: the name is required
		{"/v1/agent/allocations/" + alloc.ID + "/logs?task=a&stream=stdin", 400, "stream: must be"},
		{"/v1/agent/allocations/" + alloc.ID + "/logs?task=a&offset=-1", 400, "offset: must be"},
		{"/v1/agent/allocations/" + alloc.ID + "/logs?task=a&follow=yes", 400, "follow: must be true or false"},
		{"/v1/agent/allocations/a%00b/logs", 400, "id: invalid identifier"},
	} {
		code, body := get(t, ag.Agent, addr+tc.path)
		var e struct{ Error string }
		json.Unmarshal([]byte(body), &e)
		if code != tc.code || !strings.Contains(e.Error, tc.msg) {
			t.Errorf("GET %s = %d %s; want %d with %q", tc.path, code, body, tc.code, tc.msg)
		}
	}
	// Logs go only to the cell's server: a request it did not sign, or
	// signed for another node, is refused before anything is read.
	other := signedRequest(t, ag.Agent, addr+"/v1/agent/allocations/"+alloc.ID+"/logs?task=a")
	other.Header.Set(nodeauth.HeaderSignature, nodeauth.SignRequest(nodeauth.Verifier(nodeauth.NewSecret()), other.Header.Get(nodeauth.HeaderNonce), other.URL.RequestURI()))
	for name, req := range map[string]*http.Request{"unsigned": mustRequest(t, addr+"/v1/agent/allocations/"+alloc.ID+"/logs?task=a"), "another node's": other} {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(b), "node-auth") || resp.Header.Get(nodeauth.HeaderProof) != "" {
			t.Errorf("%s log request: %d %s, want 403 node-auth without a proof", name, resp.StatusCode, b)
		}
	}
	code, body := get(t, ag.Agent, addr+"/v1/agent/health")
	if code != 200 || !strings.Contains(body, `"status":"ok"`) || !strings.Contains(body, ag.NodeID()) {
		t.Errorf("health = %d %s", code, body)
	}
}

func mustRequest(t *testing.T, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}
