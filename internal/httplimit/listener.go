package httplimit

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Codes of the answers to connections over a cap, as in every Strata error
// body.
const (
	CodeTooManyConnections = "too-many-connections" // 429: this client's cap
	CodeServerBusy         = "server-busy"          // 503: the server's cap
)

// rejectLinger bounds how long a refused connection is kept to let the
// client read its answer; lingering is itself capped (maxLingering), past
// which refused connections are closed at once.
const (
	rejectLinger = time.Second
	maxLingering = 64
	// logEvery spaces the warnings about refused connections: a flood
	// must not become a flood of log lines.
	logEvery = 10 * time.Second
)

// Listener enforces a Config's connection caps on the connections it
// accepts. It is safe for concurrent use.
type Listener struct {
	net.Listener
	perClient, total int // caps; 0 is none
	logger           *slog.Logger

	mu       sync.Mutex
	open     int
	byClient map[string]int
	refused  int // since the last warning
	lastLog  time.Time

	lingering chan struct{}
}

// Listen wraps ln so that no client address holds more than
// c.MaxConnsPerClient connections and the server no more than c.MaxConns.
// A connection over a cap is answered at once, before any request is read:
// 429 too-many-connections (Retry-After: 1) for a client over its own cap,
// 503 server-busy for a full server, then closed.
func Listen(ln net.Listener, c Config, logger *slog.Logger) *Listener {
	c = c.WithDefaults()
	if logger == nil {
		logger = slog.Default()
	}
	return &Listener{Listener: ln, perClient: c.MaxConnsPerClient, total: c.MaxConns, logger: logger,
		byClient: map[string]int{}, lingering: make(chan struct{}, maxLingering)}
}

// Open returns the number of connections held now, and by client address.
func (l *Listener) Open() (total int, byClient map[string]int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	byClient = make(map[string]int, len(l.byClient))
	for k, v := range l.byClient {
		byClient[k] = v
	}
	return l.open, byClient
}

// Accept returns the next connection within the caps, answering and
// closing the others.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		client := clientAddr(c.RemoteAddr())
		status, code, msg := l.admit(client)
		if status == 0 {
			return &conn{Conn: c, l: l, client: client}, nil
		}
		l.refuse(c, status, code, msg)
	}
}

// admit counts a new connection of client in, or says why not.
func (l *Listener) admit(client string) (status int, code, msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.total > 0 && l.open >= l.total:
		status, code = http.StatusServiceUnavailable, CodeServerBusy
		msg = fmt.Sprintf("server busy: %d connections open, the most it holds; retry shortly", l.open)
	case l.perClient > 0 && l.byClient[client] >= l.perClient:
		status, code = http.StatusTooManyRequests, CodeTooManyConnections
		msg = fmt.Sprintf("too many connections from %s: %d open, at most %d per client; close idle ones or reuse them", client, l.byClient[client], l.perClient)
	default:
		l.open++
		l.byClient[client]++
		return 0, "", ""
	}
	l.refused++
	if now := time.Now(); now.Sub(l.lastLog) >= logEvery {
		l.logger.Warn("refusing connections over a cap", "refused", l.refused, "last_client", client, "open", l.open,
			"cap_per_client", l.perClient, "cap_total", l.total, "code", code)
		l.refused, l.lastLog = 0, now
	}
	return status, code, msg
}

func (l *Listener) release(client string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open--
	if l.byClient[client]--; l.byClient[client] <= 0 {
		delete(l.byClient, client)
	}
}

// refuse answers c with a complete HTTP response and closes it. The answer
// fits a fresh socket's send buffer, so writing does not block; the close
// lingers briefly (reading what the client sent) so that the client reads
// the answer instead of a reset.
func (l *Listener) refuse(c net.Conn, status int, code, msg string) {
	body, _ := json.Marshal(map[string]string{"error": msg, "code": code})
	resp := "HTTP/1.1 " + strconv.Itoa(status) + " " + http.StatusText(status) + "\r\n" +
		"Content-Type: application/json\r\nRetry-After: 1\r\nConnection: close\r\n" +
		"Content-Length: " + strconv.Itoa(len(body)+1) + "\r\n\r\n" + string(body) + "\n"
	c.SetWriteDeadline(time.Now().Add(rejectLinger))
	if _, err := io.WriteString(c, resp); err != nil {
		c.Close()
		return
	}
	select {
	case l.lingering <- struct{}{}:
	default:
		c.Close() // too many refusals in flight: no courtesy for this one
		return
	}
	go func() {
		defer func() { <-l.lingering }()
		defer c.Close()
		if tc, ok := c.(interface{ CloseWrite() error }); ok {
			tc.CloseWrite()
		}
		c.SetReadDeadline(time.Now().Add(rejectLinger))
		io.Copy(io.Discard, io.LimitReader(c, 64<<10))
	}()
}

// clientAddr is the address a cap counts by: the remote IP, without the
// port.
func clientAddr(a net.Addr) string {
	if tcp, ok := a.(*net.TCPAddr); ok {
		return tcp.IP.String()
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}

// conn gives its slot back once, when closed.
type conn struct {
	net.Conn
	l      *Listener
	client string
	once   sync.Once
}

func (c *conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c.client) })
	return err
}

// CloseWrite half-closes a TCP connection, as net/http does before closing
// one it answered with "Connection: close".
func (c *conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Conn.Close()
}
