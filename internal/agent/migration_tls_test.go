package agent

import (
	"context"
	"crypto/tls"
	"net/http"
	"strings"
	"testing"

	"github.com/strata-dev/strata/internal/agent/migrate"
	"github.com/strata-dev/strata/internal/pki"
)

// TestMigrationImagesTravelOverMutualTLS is issue 18 defect 5: in a TLS
// cell the source agent sent the checkpoint image with a bare HTTP client
// that lacked the cell's CA ("x509: certificate signed by unknown
// authority"), after freezing the task. The default transport of an agent
// with TLS dials the target over mutual TLS with its own agent
// certificate and the cell's CA; the target's listener takes agents for
// the migration route and servers only for logs, and nothing without a
// certificate of the cell.
func TestMigrationImagesTravelOverMutualTLS(t *testing.T) {
	needCgroups(t)
	t.Parallel()
	tlsDir := t.TempDir()
	if err := pki.EnsureDev(tlsDir); err != nil {
		t.Fatal(err)
	}
	agentFiles := pki.CertFiles(tlsDir, pki.RoleAgent)
	withTLS := func(c *Config) { c.TLS = &agentFiles }
	target := startAgent(t, newFakeServer(), t.TempDir(), withTLS)
	addr := target.Node().HTTPAddr
	if !strings.HasPrefix(addr, "https://") {
		t.Fatalf("the target serves %s, want https", addr)
	}

	source := startAgent(t, newFakeServer(), t.TempDir(), withTLS)
	_, err := source.cfg.Transport.Send(context.Background(), addr, migrate.ImageOffer{AllocID: "a1", MigrationID: "m1", Token: "tok"}, strings.NewReader(""))
	// The fake servers take no migrations: the target answers so, which
	// it can only do once the TLS handshake passed both ways.
	if err == nil || !strings.Contains(err.Error(), "cannot take migrations") {
		t.Fatalf("send image over TLS: %v, want the target's own answer", err)
	}

	// Logs are for servers: an agent's certificate gets through TLS but
	// not to the route.
	agentClient, err := agentFiles.ClientConfig(pki.RoleAgent)
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: agentClient}}
	resp, err := hc.Get(addr + "/v1/agent/allocations/a1/logs")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("logs with an agent's certificate: %s, want 403", resp.Status)
	}
	// A CLI certificate, or none, is refused by the TLS layer.
	cliFiles := pki.CertFiles(tlsDir, pki.RoleCLI)
	for name, certs := range map[string][]tls.Certificate{"cli": loadPair(t, cliFiles), "none": nil} {
		cfg, err := agentFiles.ClientConfig(pki.RoleAgent)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = certs
		hc := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}}
		req, _ := http.NewRequest(http.MethodPut, addr+"/v1/agent/migrations/m1", strings.NewReader(""))
		if resp, err := hc.Do(req); err == nil {
			resp.Body.Close()
			t.Errorf("a migration PUT with %s certificate was answered %s", name, resp.Status)
		}
	}
}

func loadPair(t *testing.T, f pki.Files) []tls.Certificate {
	t.Helper()
	pair, err := tls.LoadX509KeyPair(f.Cert, f.Key)
	if err != nil {
		t.Fatal(err)
	}
	return []tls.Certificate{pair}
}
