package server

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
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

// rawCall sends one request and returns the status, the decoded error code (if
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
	late := s.State().Snapshot().AllocsByWorkload("", "late")[0]
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
	if code, _, body := agentRequest(t, s, "POST", "/v1/agent/allocations", report, testAgentHeaders(s, late.NodeID)); code != http.StatusOK {
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
func waitReady(t *testing.T, s *Server) { waitOK(t, s.Addr()+"/v1/nodes") }

// waitOK polls url until it answers 200, for up to 20s.
func waitOK(t *testing.T, url string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		code, _, _, body := rawCall(t, "GET", url, "")
		if code == http.StatusOK {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s: still %d %s after 20s", url, code, body)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// freeAddr returns a loopback host:port that was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// TestRestartedFollowerServesNothingBeforeCatchingUp: a follower restarted
// on its data dir answers 503 not-ready — even to what it would forward —
// until its FSM has applied what the leader says is committed.
func TestRestartedFollowerServesNothingBeforeCatchingUp(t *testing.T) {
	raftAddrs := []string{freeAddr(t), freeAddr(t), freeAddr(t)}
	cfgs := make([]Config, 3)
	servers := make([]*Server, 3)
	for i := range cfgs {
		cfgs[i] = Config{DataDir: t.TempDir(), HTTPAddr: freeAddr(t), RaftAddr: raftAddrs[i], BootstrapExpect: 3,
			Join: raftAddrs, HeartbeatTTL: time.Hour, Workers: 1, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	}
	for i := range cfgs {
		s, err := New(cfgs[i])
		if err != nil {
			t.Fatal(err)
		}
		servers[i] = s
	}
	t.Cleanup(func() {
		for _, s := range servers {
			if s != nil {
				s.Close()
			}
		}
	})
	leader := -1
	deadline := time.Now().Add(30 * time.Second)
	for leader < 0 {
		for i, s := range servers {
			if s.IsLeader() && s.replica.Serving() == nil {
				leader = i
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("no leader")
		}
		time.Sleep(10 * time.Millisecond)
	}
	f := (leader + 1) % 3
	<-servers[f].Ready()
	servers[f].Close()
	applied := servers[f].fsm.AppliedIndex()
	servers[f] = nil
	submit(t, servers[leader], fmt.Sprintf(benchWorkload, "missed", 1))

	hold, held := make(chan struct{}), make(chan struct{})
	var once sync.Once
	cfgs[f].fsmApplyHook = func(index uint64) {
		if index > applied {
			once.Do(func() { close(held) })
			<-hold
		}
	}
	released := false
	release := func() {
		if !released {
			released = true
			close(hold)
		}
	}
	defer release()
	s, err := New(cfgs[f])
	if err != nil {
		t.Fatal(err)
	}
	servers[f] = s
	select {
	case <-held:
	case <-time.After(20 * time.Second):
		t.Fatal("the restarted follower never reached the hold")
	}
	for _, g := range []struct{ method, path, body string }{
		{"GET", "/v1/workloads/missed?stale", ""},
		{"GET", "/v1/workloads/missed", ""},
		{"DELETE", "/v1/workloads/missed", ""},
	} {
		code, errCode, retry, body := rawCall(t, g.method, s.Addr()+g.path, g.body)
		if code != http.StatusServiceUnavailable || errCode != "not-ready" || retry == "" {
			t.Errorf("%s %s on a follower mid-replay: %d %q %s; want 503 not-ready", g.method, g.path, code, errCode, body)
		}
	}
	if code, _, _, body := rawCall(t, "GET", s.Addr()+"/v1/status/leader", ""); code != http.StatusOK {
		t.Errorf("status mid-replay: %d %s", code, body)
	}
	release()
	waitOK(t, s.Addr()+"/v1/workloads/missed?stale")
}
