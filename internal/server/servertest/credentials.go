package servertest

import (
	"crypto/tls"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/nodeauth"
	"github.com/strata-dev/strata/internal/pki"
	"github.com/strata-dev/strata/internal/server"
)

// The credentials of a test cell, in one place: tests that start agents,
// register nodes or call the API as a user get them here, so that when the
// cell asks for more (TLS, ACL tokens) only this file changes.

// JoinToken is the cell's join token: every server of a Cell is started
// with it, and agents register new nodes with it.
func (c *Cell) JoinToken() string { return c.joinToken }

// NodeIdentity returns a new identity for node id (a fresh secret) that
// may register with this cell.
func (c *Cell) NodeIdentity(id string) *api.NodeIdentity {
	return &api.NodeIdentity{ID: id, Secret: nodeauth.NewSecret(), JoinToken: c.joinToken}
}

// AgentClient returns a client for every server of the cell that speaks
// as node id (a fresh identity: the first RegisterNode claims the id).
func (c *Cell) AgentClient(id string) *api.Client {
	cl := c.ClientOf(c.Addrs()...)
	cl.Node = c.NodeIdentity(id)
	return cl
}

// Client returns a client for every server of the cell, as a user.
func (c *Cell) Client() *api.Client { return c.ClientOf(c.Addrs()...) }

// ClientOf returns a client for the given server addresses that speaks
// the cell's TLS when it has TLS (presenting the first server's
// certificate, which the API accepts like any of the cell's).
func (c *Cell) ClientOf(addrs ...string) *api.Client {
	cl := api.NewClientFor(addrs)
	if cfg := c.tlsConfig(); cfg != nil {
		cl.SetTLS(cfg)
	}
	return cl
}

func (c *Cell) tlsConfig() *tls.Config {
	f := c.Configs[0].TLS
	if f == nil {
		return nil
	}
	cfg, err := f.ClientConfig(pki.RoleServer)
	if err != nil {
		c.t.Fatalf("servertest TLS: %v", err)
	}
	return cfg
}

// httpClient is a plain HTTP client that speaks the cell's TLS.
func (c *Cell) httpClient() *http.Client {
	if cfg := c.tlsConfig(); cfg != nil {
		return &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}}
	}
	return http.DefaultClient
}

// HTTPClientAs is a plain HTTP client that speaks the cell's TLS and
// presents a certificate of role (none for ""), made by the cell's CA: the
// certificate matrices call every route as each role.
func (c *Cell) HTTPClientAs(role pki.Role) *http.Client {
	f := c.Configs[0].TLS
	if f == nil {
		c.t.Fatal("servertest: HTTPClientAs needs a TLS cell (WithTLS)")
	}
	as := pki.CertFiles(filepath.Dir(f.CA), role)
	if role == "" {
		as.Cert, as.Key = "", ""
	}
	cfg, err := api.ClientTLS(as.CA, as.Cert, as.Key, api.TLSRoleServer)
	if err != nil {
		c.t.Fatalf("servertest TLS as %q: %v", role, err)
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: cfg, MaxIdleConnsPerHost: 8}}
}

// WithTLS makes every server of a cell use TLS credentials of one CA in
// dir, made for the test (a tweak for Start).
func WithTLS(t testing.TB) func(int, *server.Config) {
	dir := t.TempDir()
	if err := pki.EnsureDev(dir); err != nil {
		t.Fatal(err)
	}
	f := pki.CertFiles(dir, pki.RoleServer)
	return func(_ int, cfg *server.Config) { cfg.TLS = &f }
}
