package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/fsm"
	"github.com/strata-dev/strata/internal/nodeauth"
	"github.com/strata-dev/strata/internal/state"
)

// The attacks of issue 8 on the agents' endpoints, each reproduced as an
// attacker would try it against a real server, and the node identity that
// stops them.

const oneReplica = `
apiVersion: strata.dev/v1
kind: Workload
metadata: {name: %s}
spec:
  groups:
    - name: g
      tasks:
        - {name: t, driver: mock, command: ["x"], resources: {cpu: 500m, memory: 64Mi}}
`

// joinToken waits until the server's cell has a join token.
func joinToken(t *testing.T, s *Server) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for s.JoinToken() == "" {
		if time.Now().After(deadline) {
			t.Fatal("the cell never got a join token")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return s.JoinToken()
}

// agentOf returns a client that speaks as node id with secret (and the
// cell's join token, when join is true).
func agentOf(t *testing.T, s *Server, id, secret string, join bool) *api.Client {
	cl := api.NewClient(s.Addr())
	cl.RetryFor = time.Millisecond
	cl.Node = &api.NodeIdentity{ID: id, Secret: secret}
	if join {
		cl.Node.JoinToken = joinToken(t, s)
	}
	return cl
}

func testNode(id, addr, rack string) *api.Node {
	return &api.Node{ID: id, Name: id, HTTPAddr: addr, Labels: map[string]string{"rack": rack, "node": id},
		Capacity: api.Resources{CPUMilli: 4000, MemoryBytes: 8 << 30, DiskBytes: 1 << 30, NetMbps: 1000}}
}

// joined registers node id through the API as its agent, and returns the
// agent's client.
func joined(t *testing.T, s *Server, id, addr string) *api.Client {
	t.Helper()
	cl := agentOf(t, s, id, nodeauth.NewSecret(), true)
	if err := cl.RegisterNode(context.Background(), testNode(id, addr, "r1")); err != nil {
		t.Fatalf("register %s: %v", id, err)
	}
	return cl
}

// testAgentHeaders are the credentials of node id as registerCell
// registered it (and the join token, for a registration).
func testAgentHeaders(s *Server, id string) map[string]string {
	return map[string]string{api.HeaderNodeID: id, api.HeaderNodeSecret: testNodeSecret(id), api.HeaderJoinToken: s.JoinToken()}
}

// agentRequest sends an agent request with the given credential headers.
func agentRequest(t *testing.T, s *Server, method, path, body string, headers map[string]string) (int, api.ErrorResponse, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, s.Addr()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var er api.ErrorResponse
	json.Unmarshal(b, &er)
	return resp.StatusCode, er, b
}

func theAlloc(t *testing.T, s *Server, workload string) *api.Allocation {
	t.Helper()
	waitPlaced(t, s, workload, 1)
	return s.State().Snapshot().AllocsByWorkload("", workload)[0]
}

// TestForgedFailureStartsNoSecondCopy: a forged POST /v1/agent/allocations
// marking a running allocation failed made the server start a second copy
// (both ran for good). Now a report must come from the allocation's own
// node: without credentials, or as another node, it is refused whole and
// changes nothing.
func TestForgedFailureStartsNoSecondCopy(t *testing.T) {
	s := quietServer(t)
	victim := joined(t, s, "victim", "")
	other := joined(t, s, "other", "")
	submit(t, s, fmt.Sprintf(oneReplica, "w")+"      placement: {require: [\"node=victim\"]}\n")
	a := theAlloc(t, s, "w")
	if err := victim.UpdateAllocations(context.Background(), []*api.AllocUpdate{{ID: a.ID, ClientStatus: api.AllocRunning}}); err != nil {
		t.Fatal(err)
	}
	forged := fmt.Sprintf(`{"updates":[{"id":%q,"clientStatus":"failed","clientReason":"forged"}]}`, a.ID)
	for _, tc := range []struct {
		name    string
		headers map[string]string
		code    string
	}{
		{"no credentials", nil, "node-auth"},
		{"the victim's id, no secret", map[string]string{api.HeaderNodeID: "victim"}, "node-auth"},
		{"the victim's id, a wrong secret", map[string]string{api.HeaderNodeID: "victim", api.HeaderNodeSecret: nodeauth.NewSecret()}, "node-auth"},
		{"another node, its own secret", map[string]string{api.HeaderNodeID: "other", api.HeaderNodeSecret: other.Node.Secret}, "node-auth"},
		{"the join token alone", map[string]string{api.HeaderJoinToken: joinToken(t, s)}, "node-auth"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := contentIndex(s)
			status, er, body := agentRequest(t, s, "POST", "/v1/agent/allocations", forged, tc.headers)
			if status != http.StatusForbidden || er.Code != tc.code {
				t.Fatalf("forged report: %d %s, want 403 %s", status, body, tc.code)
			}
			if after := contentIndex(s); after != before {
				t.Fatalf("a refused report wrote the state (index %d → %d)", before, after)
			}
		})
	}
	if got := s.State().Snapshot().Alloc(a.ID); got.ClientStatus != api.AllocRunning {
		t.Fatalf("allocation is %s after forged reports, want running", got.ClientStatus)
	}
	if n := len(s.State().Snapshot().AllocsByWorkload("", "w")); n != 1 {
		t.Fatalf("%d allocations of w after forged failures, want 1 (no second copy)", n)
	}
}

// TestFinishedAllocationNeverRunsAgain: flipping a finished allocation back
// to running added phantom usage to its node. A transition out of a
// finished status is refused, even from the allocation's own agent, and
// the node's accounting stays as it was.
func TestFinishedAllocationNeverRunsAgain(t *testing.T) {
	s := quietServer(t)
	ag := joined(t, s, "n1", "")
	submit(t, s, fmt.Sprintf(oneReplica, "job"))
	a := theAlloc(t, s, "job")
	ctx := context.Background()
	for _, st := range []string{api.AllocRunning, api.AllocComplete} {
		if err := ag.UpdateAllocations(ctx, []*api.AllocUpdate{{ID: a.ID, ClientStatus: st}}); err != nil {
			t.Fatal(err)
		}
	}
	free := s.State().Snapshot().Node("n1").Allocated
	status, _, body := agentRequest(t, s, "POST", "/v1/agent/allocations",
		fmt.Sprintf(`{"updates":[{"id":%q,"clientStatus":"running"}]}`, a.ID),
		map[string]string{api.HeaderNodeID: "n1", api.HeaderNodeSecret: ag.Node.Secret})
	var resp api.AllocUpdatesResponse
	json.Unmarshal(body, &resp)
	if status != http.StatusOK || len(resp.Refused) != 1 || resp.Refused[0].ID != a.ID || !strings.Contains(resp.Refused[0].Reason, "finished") {
		t.Fatalf("complete → running: %d %s, want 200 with the update refused", status, body)
	}
	snap := s.State().Snapshot()
	if got := snap.Alloc(a.ID).ClientStatus; got != api.AllocComplete {
		t.Fatalf("allocation is %s, want complete", got)
	}
	if got := snap.Node("n1").Allocated; got != free {
		t.Fatalf("node allocated %+v after the flip, want %+v (no phantom usage)", got, free)
	}
}

// TestFSMRefusesFinishedToRunning: the FSM holds the rule too, for a
// command proposed around the API (an old log, a bug).
func TestFSMRefusesFinishedToRunning(t *testing.T) {
	for _, old := range []string{api.AllocComplete, api.AllocFailed, api.AllocLost} {
		for _, next := range []string{api.AllocPending, api.AllocRunning} {
			if state.IllegalClientTransition(old, next) == "" {
				t.Errorf("%s → %s allowed", old, next)
			}
		}
	}
	for _, ok := range [][2]string{{api.AllocPending, api.AllocRunning}, {api.AllocRunning, api.AllocFailed}, {api.AllocRunning, api.AllocComplete}, {api.AllocComplete, api.AllocComplete}} {
		if why := state.IllegalClientTransition(ok[0], ok[1]); why != "" {
			t.Errorf("%s → %s refused: %s", ok[0], ok[1], why)
		}
	}
	s := quietServer(t)
	registerNodes(t, s, 2)
	submit(t, s, fmt.Sprintf(benchWorkload, "w", 1))
	a := theAlloc(t, s, "w")
	for _, st := range []string{api.AllocFailed, api.AllocRunning} {
		if _, err := s.propose(&fsm.AllocClientUpdate{Updates: []*api.AllocUpdate{{ID: a.ID, ClientStatus: st}}}); err != nil {
			t.Fatal(err)
		}
	}
	snap := s.State().Snapshot()
	if got := snap.Alloc(a.ID).ClientStatus; got != api.AllocFailed {
		t.Fatalf("allocation is %s after failed → running through raft, want failed", got)
	}
	if got := snap.Node(a.NodeID).Allocated; got != (api.Resources{}) {
		t.Fatalf("node %s allocated %+v, want nothing", a.NodeID, got)
	}
}

// TestNodeIDCannotBeTakenOver: re-registering a real agent's node id
// overwrote its labels, capacity and address while that agent kept
// heartbeating. Only the agent holding the node's secret may register it
// again; anyone else is refused and the node stays as it was.
func TestNodeIDCannotBeTakenOver(t *testing.T) {
	s := quietServer(t)
	real := joined(t, s, "n1", "http://127.0.0.1:4000")
	before := s.State().Snapshot().Node("n1")
	hijack := testNode("n1", "http://169.254.169.254", "evil")
	hijack.Capacity.CPUMilli = 1_000_000
	body, _ := json.Marshal(hijack)
	for _, tc := range []struct {
		name    string
		headers map[string]string
		code    string
	}{
		{"anonymous", nil, "node-id-taken"},
		{"with the join token and a secret of its own", map[string]string{api.HeaderJoinToken: joinToken(t, s), api.HeaderNodeSecret: nodeauth.NewSecret()}, "node-id-taken"},
		{"with a wrong join token", map[string]string{api.HeaderJoinToken: "nope", api.HeaderNodeSecret: nodeauth.NewSecret()}, "node-id-taken"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, er, b := agentRequest(t, s, "POST", "/v1/agent/nodes", string(body), tc.headers)
			if status != http.StatusForbidden || er.Code != tc.code {
				t.Fatalf("takeover: %d %s, want 403 %s", status, b, tc.code)
			}
		})
	}
	after := s.State().Snapshot().Node("n1")
	if after.HTTPAddr != before.HTTPAddr || after.Labels["rack"] != "r1" || after.Capacity != before.Capacity || after.ModifyIndex != before.ModifyIndex {
		t.Fatalf("node changed by a refused takeover: %+v", after)
	}
	// The real agent still heartbeats, and may register again (a restart).
	if err := real.Heartbeat(context.Background(), "n1"); err != nil {
		t.Fatalf("the real agent's heartbeat: %v", err)
	}
	if err := real.RegisterNode(context.Background(), testNode("n1", "http://127.0.0.1:4001", "r1")); err != nil {
		t.Fatalf("the real agent registers again: %v", err)
	}
	if got := s.State().Snapshot().Node("n1").HTTPAddr; got != "http://127.0.0.1:4001" {
		t.Fatalf("address after the real agent's restart: %q", got)
	}
}

// TestRegistrationNeedsTheJoinToken: a node id the cell does not know is
// registered only with the cell's join token and a real secret.
func TestRegistrationNeedsTheJoinToken(t *testing.T) {
	s := quietServer(t)
	body, _ := json.Marshal(testNode("n9", "", "r1"))
	secret := nodeauth.NewSecret()
	for _, tc := range []struct {
		name    string
		headers map[string]string
		want    string
	}{
		{"no join token", map[string]string{api.HeaderNodeSecret: secret}, "needs the cell's join token"},
		{"a wrong join token", map[string]string{api.HeaderJoinToken: nodeauth.NewSecret(), api.HeaderNodeSecret: secret}, "wrong join token"},
		{"a short secret", map[string]string{api.HeaderJoinToken: joinToken(t, s), api.HeaderNodeSecret: "abc"}, "at least 32"},
		{"another node's id in the header", map[string]string{api.HeaderJoinToken: joinToken(t, s), api.HeaderNodeSecret: secret, api.HeaderNodeID: "n8"}, `is "n8"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, er, b := agentRequest(t, s, "POST", "/v1/agent/nodes", string(body), tc.headers)
			if status != http.StatusForbidden || !strings.Contains(er.Error, tc.want) {
				t.Fatalf("%d %s, want 403 saying %q", status, b, tc.want)
			}
			if s.State().Snapshot().Node("n9") != nil {
				t.Fatal("a refused registration stored the node")
			}
		})
	}
}

// TestAgentCallsAreAuthenticated: heartbeats and the allocation watch of a
// node need that node's secret; a node known without a key (registered
// before node identity) is "unknown", so its agent registers again.
func TestAgentCallsAreAuthenticated(t *testing.T) {
	s := quietServer(t)
	ag := joined(t, s, "n1", "")
	if _, err := s.propose(&fsm.UpsertNode{Node: testNode("legacy", "", "r1")}); err != nil {
		t.Fatal(err)
	}
	good := map[string]string{api.HeaderNodeID: "n1", api.HeaderNodeSecret: ag.Node.Secret}
	wrong := map[string]string{api.HeaderNodeID: "n1", api.HeaderNodeSecret: nodeauth.NewSecret()}
	for _, tc := range []struct {
		method, path string
		headers      map[string]string
		status       int
		code         string
	}{
		{"PUT", "/v1/agent/nodes/n1/heartbeat", good, 200, ""},
		{"PUT", "/v1/agent/nodes/n1/heartbeat", nil, 403, "node-auth"},
		{"PUT", "/v1/agent/nodes/n1/heartbeat", wrong, 403, "node-auth"},
		{"PUT", "/v1/agent/nodes/legacy/heartbeat", good, 404, "node-unknown"},
		{"GET", "/v1/agent/nodes/n1/allocations", good, 200, ""},
		{"GET", "/v1/agent/nodes/n1/allocations", nil, 403, "node-auth"},
		{"GET", "/v1/agent/nodes/legacy/allocations", good, 404, "node-unknown"},
		{"POST", "/v1/agent/allocations", good, 200, ""},
		{"POST", "/v1/agent/allocations", wrong, 403, "node-auth"},
	} {
		body := ""
		if tc.method == "POST" {
			body = `{"updates":[]}`
		}
		status, er, b := agentRequest(t, s, tc.method, tc.path, body, tc.headers)
		if status != tc.status || er.Code != tc.code {
			t.Errorf("%s %s: %d %s, want %d %s", tc.method, tc.path, status, b, tc.status, tc.code)
		}
	}
}

// TestLogsOnlyFromTheNodesAgent: registering a node with any httpAddr
// made GET /v1/allocations/<id>/logs fetch that URL and return its body
// (server-side request forgery). Now only a node registered with the join
// token has an address at all, and the server relays an answer only when
// it proves it comes from that node's agent: a rogue address's body is
// never returned.
func TestLogsOnlyFromTheNodesAgent(t *testing.T) {
	metadata := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "iam-role-credentials: SECRET")
	}))
	defer metadata.Close()
	s := quietServer(t)

	// Without the join token, no node with that address exists.
	body, _ := json.Marshal(testNode("rogue", metadata.URL, "r1"))
	if status, _, b := agentRequest(t, s, "POST", "/v1/agent/nodes", string(body), map[string]string{api.HeaderNodeSecret: nodeauth.NewSecret()}); status != http.StatusForbidden {
		t.Fatalf("registration without the join token: %d %s", status, b)
	}
	// With it (a stolen token, a compromised machine), its address still
	// yields nothing but an error.
	joined(t, s, "rogue", metadata.URL)
	submit(t, s, fmt.Sprintf(oneReplica, "w"))
	a := theAlloc(t, s, "w")
	status, er, b := agentRequest(t, s, "GET", "/v1/allocations/"+a.ID+"/logs", "", nil)
	if status != http.StatusBadGateway || er.Code != "agent-unproven" || strings.Contains(string(b), "SECRET") {
		t.Fatalf("logs from a rogue address: %d %s, want 502 agent-unproven without its body", status, b)
	}
}
