package server

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"

	"github.com/strata-dev/strata/internal/pki"
)

// TLS of a server (docs/security.md), when Config.TLS is set:
//
//   - the API serves HTTPS; a client may present a certificate of the
//     cell's CA, and the agents' endpoints require one of role agent;
//     without ACLs the users' endpoints require one of role cli (or
//     server), unless Config.AllowAnonymous — with ACLs a token decides
//     (httpapi, client_cert.go). The status endpoints take anyone, so
//     the handshake only asks for a certificate, and the API answers a
//     call that lacks one with a 403 that says what to give;
//   - the server port (raft, formation, forwarded requests) is mutual
//     TLS between certificates of role server, on both sides (replica);
//   - logs are fetched from agents over mutual TLS: the server presents
//     its certificate and accepts only an agent's (httpapi).
//
// Without it the server speaks plaintext, and says so loudly at start.

// serverTLS holds a server's TLS configurations, made from its files
// once and handed to the rooms that use them.
type serverTLS struct {
	api   *tls.Config // the API listener
	peer  *tls.Config // accepting on the server port
	dial  *tls.Config // dialling other servers
	agent *tls.Config // dialling agents for logs
}

func newServerTLS(f *pki.Files) (*serverTLS, error) {
	if err := f.Check(pki.RoleServer); err != nil {
		return nil, fmt.Errorf("server TLS: %w", err)
	}
	var t serverTLS
	var err error
	if t.api, err = f.ServerConfig(false, pki.RoleAgent, pki.RoleCLI, pki.RoleServer, pki.RoleScrape); err != nil {
		return nil, err
	}
	if t.peer, err = f.ServerConfig(true, pki.RoleServer); err != nil {
		return nil, err
	}
	if t.dial, err = f.ClientConfig(pki.RoleServer); err != nil {
		return nil, err
	}
	if t.agent, err = f.ClientConfig(pki.RoleAgent); err != nil {
		return nil, err
	}
	return &t, nil
}

// verifyClient checks a client's certificate chain as the API's listener
// does (the cell's CA, a client role): the API runs it on a chain a
// follower forwarded.
func (t *serverTLS) verifyClient(chain []*x509.Certificate) error {
	return t.api.VerifyConnection(tls.ConnectionState{PeerCertificates: chain})
}
