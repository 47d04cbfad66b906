package server

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
)

// heldReplay reopens a one-server cell on dir with its FSM held before it
// applies any command past holdAfter, and returns once the hold is reached.
// release lets the replay go on; it is also called at cleanup.
func heldReplay(t *testing.T, dir string, holdAfter uint64) (s *Server, release func()) {
	t.Helper()
	hold, held := make(chan struct{}), make(chan struct{})
	var heldOnce, releaseOnce sync.Once
	release = func() { releaseOnce.Do(func() { close(hold) }) }
	cfg := Config{DataDir: dir, HTTPAddr: "127.0.0.1:0", HeartbeatTTL: time.Hour,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		fsmApplyHook: func(index uint64) {
			if index > holdAfter {
				heldOnce.Do(func() { close(held) })
				<-hold
			}
		}}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { release(); s.Close() })
	select {
	case <-held:
	case <-time.After(20 * time.Second):
		t.Fatal("the replay never reached the hold")
	}
	return s, release
}

// call sends one request and returns the status, the decoded error code (if
// any), the Retry-After header and the body.
func rawCall(t *testing.T, method, url, body string) (int, string, string, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var er api.ErrorResponse
	json.Unmarshal(b, &er)
	return resp.StatusCode, er.Code, resp.Header.Get("Retry-After"), b
}

// TestRestartServesNothingBeforeReplay reproduces issue 7 defect 1: after a
// restart the server answered from a partly replayed state (it waited on
// raft's AppliedIndex, which means "handed to the FSM"). A DELETE of an
// existing workload got 404, an agent's status report got 200 and was
// dropped, and the agent's watch was told a list without its allocation.
// Every answer but /v1/status/* must be 503 not-ready until the FSM has
// applied everything committed, and then the state must be whole.
func TestRestartServesNothingBeforeReplay(t *testing.T) {
	dir := t.TempDir()
	s := quietServerIn(t, dir)
	registerNodes(t, s, 2)
	before := s.State().Index()
	submit(t, s, fmt.Sprintf(benchWorkload, "late", 1))
	waitPlaced(t, s, "late", 1)
	late := s.State().Snapshot().AllocsByWorkload("late")[0]
	s.Close()

	s, release := heldReplay(t, dir, before)
	report := fmt.Sprintf(`{"updates":[{"id":%q,"clientStatus":"running"}]}`, late.ID)
	gated := []struct{ method, path, body string }{
		{"DELETE", "/v1/workloads/late", ""},
		{"GET", "/v1/workloads/late", ""},
		{"GET", "/v1/workloads", ""},
		{"POST", "/v1/agent/allocations", report},
		{"GET", "/v1/agent/nodes/" + late.NodeID + "/allocations", ""},
		{"PUT", "/v1/agent/nodes/" + late.NodeID + "/heartbeat", ""},
		{"GET", "/v1/nodes", ""},
	}
	for _, g := range gated {
		code, errCode, retry, body := rawCall(t, g.method, s.Addr()+g.path, g.body)
		if code != http.StatusServiceUnavailable || errCode != "not-ready" || retry == "" {
			t.Errorf("%s %s mid-replay: %d %q Retry-After %q: %s; want 503 not-ready with Retry-After", g.method, g.path, code, errCode, retry, body)
		}
	}
	if code, _, _, body := rawCall(t, "GET", s.Addr()+"/v1/status/leader", ""); code != http.StatusOK {
		t.Errorf("GET /v1/status/leader mid-replay: %d %s; want 200", code, body)
	}

	release()
	waitReady(t, s)
	if code, _, _, body := rawCall(t, "POST", s.Addr()+"/v1/agent/allocations", report); code != http.StatusOK {
		t.Fatalf("report after replay: %d %s", code, body)
	}
	if a := s.State().Snapshot().Alloc(late.ID); a == nil || a.ClientStatus != api.AllocRunning {
		t.Fatalf("the report after replay was dropped: %+v", a)
	}
	if code, _, _, body := rawCall(t, "DELETE", s.Addr()+"/v1/workloads/late", ""); code != http.StatusOK {
		t.Fatalf("DELETE of an existing workload after replay: %d %s", code, body)
	}
}

// waitReady polls a server until it answers a plain read with 200.
func waitReady(t *testing.T, s *Server) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		code, _, _, body := rawCall(t, "GET", s.Addr()+"/v1/nodes", "")
		if code == http.StatusOK {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("server not ready after 20s: %d %s", code, body)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
