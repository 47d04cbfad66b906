package server

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/pki"
)

// TLS of a server (docs/security.md), when Config.TLS is set:
//
//   - the API serves HTTPS; a client may present a certificate of the
//     cell's CA (a CLI user may use a token instead), and the agents'
//     endpoints require one of role agent;
//   - the server port (raft, formation, forwarded requests) is mutual
//     TLS between certificates of role server, on both sides;
//   - logs are fetched from agents over mutual TLS: the server presents
//     its certificate and accepts only an agent's.
//
// Without it the server speaks plaintext, and says so loudly at start.

// tlsHandshakeTimeout bounds a server port handshake.
const tlsHandshakeTimeout = 10 * time.Second

// serverTLS holds a server's TLS configurations.
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

// wrapServer and wrapClient are the server port's TLS (serverport.Options).
func (t *serverTLS) wrapServer(conn net.Conn) (net.Conn, error) {
	c := tls.Server(conn, t.peer)
	ctx, cancel := context.WithTimeout(context.Background(), tlsHandshakeTimeout)
	defer cancel()
	if err := c.HandshakeContext(ctx); err != nil {
		return nil, fmt.Errorf("TLS handshake with %s: %w", conn.RemoteAddr(), err)
	}
	return c, nil
}

func (t *serverTLS) wrapClient(conn net.Conn, addr string) (net.Conn, error) {
	c := tls.Client(conn, t.dial)
	ctx, cancel := context.WithTimeout(context.Background(), tlsHandshakeTimeout)
	defer cancel()
	if err := c.HandshakeContext(ctx); err != nil {
		return nil, fmt.Errorf("TLS handshake with server %s: %w", addr, err)
	}
	return c, nil
}

// newAgentHTTP is the client that fetches logs from agents: it follows no
// redirect (the server talks to the registered address only, and relays
// only what that node's agent proved it sent) and, with TLS, presents the
// server's certificate and accepts only an agent's.
func newAgentHTTP(t *serverTLS) *http.Client {
	tr := &http.Transport{
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		ResponseHeaderTimeout: 10 * time.Second,
	}
	if t != nil {
		tr.TLSClientConfig = t.agent
	}
	return &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// requireAgentCert refuses an agent's call that did not come with a
// certificate of role agent, when the server runs TLS.
func (s *Server) requireAgentCert(r *http.Request) error {
	if s.tls == nil {
		return nil
	}
	if forwardedByServer(r) {
		return nil // a follower forwarded it: that server checked the certificate
	}
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return nodeAuthError("an agent's call needs the agent's certificate (mutual TLS): none was presented")
	}
	for _, ou := range r.TLS.PeerCertificates[0].Subject.OrganizationalUnit {
		if ou == api.TLSRoleAgent {
			return nil
		}
	}
	return nodeAuthError("an agent's call needs a certificate of role agent, got %v", r.TLS.PeerCertificates[0].Subject.OrganizationalUnit)
}

type serverPortKey struct{}

// viaServerPort marks the requests that came over the server port: only
// other servers reach it (mutual TLS with a server certificate).
func viaServerPort(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), serverPortKey{}, true)))
	})
}

// forwardedByServer reports whether r is a request a follower forwarded
// over the server port; the forwarding header alone, which any client can
// set on the API port, proves nothing.
func forwardedByServer(r *http.Request) bool {
	via, _ := r.Context().Value(serverPortKey{}).(bool)
	return via && r.Header.Get(forwardedHeader) != ""
}
