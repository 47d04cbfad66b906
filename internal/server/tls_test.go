package server

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/nodeauth"
	"github.com/strata-dev/strata/internal/pki"
)

// TestAgentCallsNeedAnAgentCertificate: with TLS, the agents' endpoints
// need a client certificate of role agent; a CLI certificate, none, or a
// forged "forwarded by a server" header on the API port do not do.
func TestAgentCallsNeedAnAgentCertificate(t *testing.T) {
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
	as := func(role pki.Role) *http.Client {
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
	for _, tc := range []struct {
		name    string
		client  *http.Client
		headers map[string]string
	}{
		{"no certificate", as(""), nil},
		{"a CLI certificate", as(pki.RoleCLI), nil},
		{"a CLI certificate claiming a server forwarded it", as(pki.RoleCLI), map[string]string{"X-Strata-Forwarded-By": "server-1"}},
	} {
		if status, body := register(tc.client, tc.headers); status != http.StatusForbidden || !strings.Contains(body, "certificate") {
			t.Errorf("%s: %d %s, want 403 naming the certificate", tc.name, status, body)
		}
	}
	if status, body := register(as(pki.RoleAgent), nil); status != http.StatusOK {
		t.Fatalf("an agent certificate: %d %s", status, body)
	}
}
