package pki

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
)

// handshake runs a TLS handshake between a server and a client config
// and returns the client's and the server's errors.
func handshake(t *testing.T, server, client *tls.Config) (clientErr, serverErr error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	done := make(chan error, 1)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			done <- err
			return
		}
		s := tls.Server(conn, server)
		done <- s.Handshake()
		s.Close()
	}()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c := tls.Client(conn, client)
	clientErr = c.Handshake()
	if clientErr == nil {
		// TLS 1.3: the server judges the client's certificate after the
		// client finished; its verdict arrives with the first read.
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		var b [1]byte
		if _, err := c.Read(b[:]); err != nil && !errors.Is(err, io.EOF) {
			clientErr = err
		}
	}
	c.Close()
	return clientErr, <-done
}

func mustCert(t *testing.T, caDir, out string, req CertRequest) Files {
	t.Helper()
	if req.Validity == 0 {
		req.Validity = time.Hour
	}
	f, err := CreateCert(caDir, out, req)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// withCert presents f's certificate from cfg, whatever its dates.
func withCert(t *testing.T, cfg *tls.Config, f Files) *tls.Config {
	t.Helper()
	pair, err := tls.LoadX509KeyPair(f.Cert, f.Key)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Certificates = []tls.Certificate{pair}
	return cfg
}

func TestMutualTLSRolesAndErrors(t *testing.T) {
	ca, other := t.TempDir(), t.TempDir()
	for _, d := range []string{ca, other} {
		if err := CreateCA(d, "test CA", time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	if err := CreateCA(ca, "again", time.Hour); err == nil {
		t.Fatal("CreateCA overwrote a CA")
	}
	server := mustCert(t, ca, t.TempDir(), CertRequest{Role: RoleServer})
	agent := mustCert(t, ca, t.TempDir(), CertRequest{Role: RoleAgent})
	foreign := mustCert(t, other, t.TempDir(), CertRequest{Role: RoleAgent})
	foreignServer := mustCert(t, other, t.TempDir(), CertRequest{Role: RoleServer})
	expired := mustCert(t, ca, t.TempDir(), CertRequest{Role: RoleAgent, NotBefore: time.Now().Add(-3 * time.Hour)})

	srvCfg, err := server.ServerConfig(true, RoleAgent)
	if err != nil {
		t.Fatal(err)
	}
	client := func(f Files, peer Role) *tls.Config {
		c, err := f.ClientConfig(peer)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	// A side refuses its own expired certificate before it dials, saying
	// so (the peer would only answer "bad certificate"); the case below
	// sends one anyway to check that the peer refuses it too.
	if _, err := expired.ClientConfig(RoleServer); err == nil || !strings.Contains(err.Error(), "expired at") {
		t.Fatalf("a client config with an expired certificate: %v", err)
	}
	cases := []struct {
		name            string
		server, client  *tls.Config
		clientSays      string
		serverSays      string
		wantClientError bool
	}{
		{"an agent dials a server", srvCfg, client(agent, RoleServer), "", "", false},
		{"a certificate of another CA", srvCfg, client(Files{CA: agent.CA, Cert: foreign.Cert, Key: foreign.Key}, RoleServer), "", "not signed by this cell's CA", true},
		{"a server's certificate offered as an agent's", srvCfg, client(Files{CA: server.CA, Cert: server.Cert, Key: server.Key}, RoleServer), "", "wrong role", true},
		{"an expired certificate", srvCfg, withCert(t, client(Files{CA: expired.CA}, RoleServer), expired), "", "expired", true},
		{"a server of another CA", mustServer(t, foreignServer), client(agent, RoleServer), "not signed by this cell's CA", "", true},
		{"an agent posing as a server", mustServer(t, agent), client(server, RoleServer), "wrong role", "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cerr, serr := handshake(t, tc.server, tc.client)
			if !tc.wantClientError {
				if cerr != nil || serr != nil {
					t.Fatalf("handshake: client %v, server %v", cerr, serr)
				}
				return
			}
			if cerr == nil && serr == nil {
				t.Fatal("handshake succeeded")
			}
			if tc.serverSays != "" && (serr == nil || !strings.Contains(serr.Error(), tc.serverSays)) {
				t.Fatalf("server error %v, want one saying %q", serr, tc.serverSays)
			}
			if tc.clientSays != "" && (cerr == nil || !strings.Contains(cerr.Error(), tc.clientSays)) {
				t.Fatalf("client error %v, want one saying %q", cerr, tc.clientSays)
			}
		})
	}
	if err := agent.Check(RoleServer); !errors.Is(err, api.ErrWrongRole) {
		t.Errorf("Check of an agent certificate as a server's: %v", err)
	}
	if err := expired.Check(RoleAgent); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Errorf("Check of an expired certificate: %v", err)
	}
}

func mustServer(t *testing.T, f Files) *tls.Config {
	t.Helper()
	c, err := f.ServerConfig(true, RoleAgent, RoleServer, RoleCLI)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestEnsureDevIsIdempotent(t *testing.T) {
	dir := t.TempDir()
	if err := EnsureDev(dir); err != nil {
		t.Fatal(err)
	}
	before, _ := readCert(CertFiles(dir, RoleServer).Cert)
	if err := EnsureDev(dir); err != nil {
		t.Fatal(err)
	}
	after, _ := readCert(CertFiles(dir, RoleServer).Cert)
	if !before.Equal(after) {
		t.Fatal("EnsureDev replaced existing credentials")
	}
	for _, r := range Roles {
		if err := CertFiles(dir, r).Check(r); err != nil {
			t.Errorf("%s: %v", r, err)
		}
	}
}
