package replica

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"time"
)

// tlsHandshakeTimeout bounds a server port handshake.
const tlsHandshakeTimeout = 10 * time.Second

// portTLS is the server port's mutual TLS between servers (docs/security.md):
// raft, formation and forwarded requests.
type portTLS struct {
	accept *tls.Config // accepting on the server port
	dial   *tls.Config // dialling other servers
}

// wrapServer and wrapClient are the server port's TLS (serverport.Options).
func (t portTLS) wrapServer(conn net.Conn) (net.Conn, error) {
	c := tls.Server(conn, t.accept)
	ctx, cancel := context.WithTimeout(context.Background(), tlsHandshakeTimeout)
	defer cancel()
	if err := c.HandshakeContext(ctx); err != nil {
		return nil, fmt.Errorf("TLS handshake with %s: %w", conn.RemoteAddr(), err)
	}
	return c, nil
}

func (t portTLS) wrapClient(conn net.Conn, addr string) (net.Conn, error) {
	c := tls.Client(conn, t.dial)
	ctx, cancel := context.WithTimeout(context.Background(), tlsHandshakeTimeout)
	defer cancel()
	if err := c.HandshakeContext(ctx); err != nil {
		return nil, fmt.Errorf("TLS handshake with server %s: %w", addr, err)
	}
	return c, nil
}
