package server

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/fsm"
	"github.com/strata-dev/strata/internal/nodeauth"
	"github.com/strata-dev/strata/internal/pki"
	"github.com/strata-dev/strata/internal/state"
)

// TestAgentCallsNeedAnAgentCertificate: with TLS, the agents' endpoints
// need a client certificate of role agent; a CLI certificate, none, or a
// forged "forwarded by a server" header on the API port do not do.
func TestAgentCallsNeedAnAgentCertificate(t *testing.T) {
	s, as := tlsTestServer(t)
	register := func(client *http.Client, headers map[string]string) (int, string) {
		body, _ := json.Marshal(testNode("n1", "", "r1"))
		req, _ := http.NewRequest("POST", s.Addr()+"/v1/agent/nodes", strings.NewReader(string(body)))
		req.Header.Set(api.HeaderJoinToken, joinToken(t, s))
		req.Header.Set(api.HeaderNodeSecret, nodeauth.NewSecret())
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	agentDER := as(pki.RoleAgent).Transport.(*http.Transport).TLSClientConfig.Certificates[0].Certificate[0]
	for _, tc := range []struct {
		name    string
		client  *http.Client
		headers map[string]string
	}{
		{"no certificate", as(""), nil},
		{"a CLI certificate", as(pki.RoleCLI), nil},
		{"a CLI certificate claiming a server forwarded it", as(pki.RoleCLI), map[string]string{"X-Strata-Forwarded-By": "server-1"}},
		// What a follower carries, sent by a client to the API port: believed
		// only over the servers' mutual TLS.
		{"a CLI certificate carrying an agent's as a follower would", as(pki.RoleCLI), map[string]string{"X-Strata-Forwarded-By": "server-1",
			"X-Strata-Client-Certificate": base64.StdEncoding.EncodeToString(agentDER)}},
		{"no certificate, carrying an agent's", as(""), map[string]string{"X-Strata-Client-Certificate": base64.StdEncoding.EncodeToString(agentDER)}},
	} {
		if status, body := register(tc.client, tc.headers); status != http.StatusForbidden || !strings.Contains(body, "certificate") {
			t.Errorf("%s: %d %s, want 403 naming the certificate", tc.name, status, body)
		}
	}
	if status, body := register(as(pki.RoleAgent), nil); status != http.StatusOK {
		t.Fatalf("an agent certificate: %d %s", status, body)
	}
}

// tlsTestServer starts a one-server TLS cell (without ACLs, so clients
// prove themselves with certificates) and returns it and a client maker
// per certificate role ("": no certificate).
func tlsTestServer(t *testing.T) (*Server, func(role pki.Role) *http.Client) {
	t.Helper()
	dir := t.TempDir()
	if err := pki.EnsureDev(dir); err != nil {
		t.Fatal(err)
	}
	files := pki.CertFiles(dir, pki.RoleServer)
	s, err := New(Config{DataDir: t.TempDir(), HTTPAddr: "127.0.0.1:0", HeartbeatTTL: time.Hour, TLS: &files,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	<-s.Ready()
	return s, func(role pki.Role) *http.Client {
		f := pki.CertFiles(dir, role)
		if role == "" {
			f.Cert, f.Key = "", ""
		}
		cfg, err := api.ClientTLS(f.CA, f.Cert, f.Key, api.TLSRoleServer)
		if err != nil {
			t.Fatal(err)
		}
		return &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}}
	}
}

// TestTLSCellRefusesPlaintextAgentAddresses reproduces issue 18's defect
// 13 (part): in a TLS cell a node could register a plaintext httpAddr,
// and the server then fetched its logs over plaintext (a blind SSRF with
// a fixed path). The registration is refused, naming the field; and a
// node registered so before (an older server) gets no plaintext dial:
// nothing connects to its address.
func TestTLSCellRefusesPlaintextAgentAddresses(t *testing.T) {
	s, as := tlsTestServer(t)
	agent := as(pki.RoleAgent)
	register := func(id, addr string) (int, api.ErrorResponse) {
		body, _ := json.Marshal(testNode(id, addr, "r1"))
		req, _ := http.NewRequest("POST", s.Addr()+"/v1/agent/nodes", strings.NewReader(string(body)))
		req.Header.Set(api.HeaderJoinToken, joinToken(t, s))
		req.Header.Set(api.HeaderNodeSecret, nodeauth.NewSecret())
		resp, err := agent.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var er api.ErrorResponse
		json.NewDecoder(resp.Body).Decode(&er)
		return resp.StatusCode, er
	}
	if status, er := register("plain", "http://127.0.0.1:4690"); status != http.StatusBadRequest || len(er.Fields) != 1 || er.Fields[0].Path != "httpAddr" ||
		!strings.Contains(er.Error, "https://") {
		t.Errorf("a plaintext agent address in a TLS cell: %d %+v, want 400 naming httpAddr and asking for https://", status, er)
	}
	if status, er := register("secure", "https://127.0.0.1:4690"); status != http.StatusOK {
		t.Errorf("an https agent address: %d %+v", status, er)
	}

	// A node an older server let in with a plaintext address.
	dialled := make(chan struct{}, 1)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			dialled <- struct{}{}
			c.Close()
		}
	}()
	old := &api.Node{ID: "old", Name: "old", Status: api.NodeReady, HTTPAddr: "http://" + ln.Addr().String(),
		Capacity: api.Resources{CPUMilli: 32000, MemoryBytes: 128 << 30, DiskBytes: 1 << 40, NetMbps: 10000}}
	if _, err := s.propose(&fsm.UpsertNode{Node: old, Key: &state.NodeKey{NodeID: "old", Verifier: nodeauth.Verifier(testNodeSecret("old"))}}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"plain", "secure"} { // the allocation goes to old
		if _, err := s.propose(&fsm.UpsertNode{Node: &api.Node{ID: id, Name: id, Status: api.NodeDown, HTTPAddr: "https://127.0.0.1:4690",
			Capacity: api.Resources{CPUMilli: 4000, MemoryBytes: 8 << 30, DiskBytes: 1 << 30, NetMbps: 1000}}}); err != nil {
			t.Fatal(err)
		}
	}
	req, _ := http.NewRequest("POST", s.Addr()+"/v1/workloads", strings.NewReader(fmt.Sprintf(oneReplica, "w")))
	resp, err := as(pki.RoleCLI).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var alloc *api.Allocation
	waitFor(t, 10*time.Second, "the allocation on node old", func() error {
		for _, a := range s.State().Snapshot().AllocsByWorkload("", "w") {
			if a.NodeID == "old" {
				alloc = a
				return nil
			}
		}
		return fmt.Errorf("not placed on old yet")
	})
	resp, err = as(pki.RoleCLI).Get(s.Addr() + "/v1/allocations/" + alloc.ID + "/logs")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(string(b), "plaintext") {
		t.Errorf("logs from a plaintext address in a TLS cell: %d %s, want 502 saying why", resp.StatusCode, b)
	}
	select {
	case <-dialled:
		t.Error("the server dialled a plaintext agent address in a TLS cell")
	case <-time.After(200 * time.Millisecond):
	}
}
