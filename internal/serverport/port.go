package serverport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/raft"

	"github.com/strata-dev/strata/internal/backoff"
)

// Kind is the first byte of a connection: the protocol that follows.
type Kind byte

// The protocols on a server port. Values go on the wire: never change them.
const (
	KindRaft Kind = 'R'
	KindHTTP Kind = 'H'
)

func (k Kind) String() string {
	switch k {
	case KindRaft:
		return "raft"
	case KindHTTP:
		return "http"
	}
	return fmt.Sprintf("kind(%#x)", byte(k))
}

// ErrUnknownKind is logged for a connection whose first byte names no
// protocol; such a connection is closed.
var ErrUnknownKind = errors.New("unknown connection kind")

// ErrNotAdvertisable is returned by Listen when the address others must
// dial is unknown: the bind address is unspecified (0.0.0.0, ::) and no
// advertise address was given.
var ErrNotAdvertisable = errors.New("bind address is not an address other servers can dial")

// kindTimeout bounds how long an accepted connection may take to send its
// kind byte.
const kindTimeout = 5 * time.Second

// Options configure a Port. Zero values take the documented defaults.
type Options struct {
	// Advertise is the host:port other servers dial to reach this one;
	// default the bound address, which must then be a concrete IP.
	Advertise string
	// WrapServer, when set, wraps every accepted connection after its
	// kind byte was read (TLS server side, later).
	WrapServer func(net.Conn) (net.Conn, error)
	// WrapClient, when set, wraps every dialled connection after its kind
	// byte was written (TLS client side, later).
	WrapClient func(conn net.Conn, addr string) (net.Conn, error)
	// DialTimeout bounds a dial when the caller gives no deadline; default 5s.
	DialTimeout time.Duration
	Logger      *slog.Logger
}

// Port is a listening server port. It is safe for concurrent use.
type Port struct {
	opts      Options
	ln        net.Listener
	advertise advertiseAddr
	queues    map[Kind]*queue

	closeOnce sync.Once
	done      chan struct{}
	wg        sync.WaitGroup
}

// Listen binds addr and starts accepting connections.
func Listen(addr string, opts Options) (*Port, error) {
	if opts.DialTimeout <= 0 {
		opts.DialTimeout = 5 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on server port %s: %w", addr, err)
	}
	adv := opts.Advertise
	if adv == "" {
		tcp := ln.Addr().(*net.TCPAddr)
		if tcp.IP.IsUnspecified() {
			ln.Close()
			return nil, fmt.Errorf("%w: %s (name an address or give an advertise address)", ErrNotAdvertisable, ln.Addr())
		}
		adv = tcp.String()
	} else if _, _, err := net.SplitHostPort(adv); err != nil {
		ln.Close()
		return nil, fmt.Errorf("advertise address %q: %w", adv, err)
	}
	p := &Port{opts: opts, ln: ln, advertise: advertiseAddr(adv), done: make(chan struct{}),
		queues: map[Kind]*queue{}}
	for _, k := range []Kind{KindRaft, KindHTTP} {
		p.queues[k] = &queue{port: p, conns: make(chan net.Conn), closed: make(chan struct{})}
	}
	p.wg.Add(1)
	go p.acceptLoop()
	return p, nil
}

// Addr is the advertised address other servers dial.
func (p *Port) Addr() string { return string(p.advertise) }

// Close stops accepting; connections already handed out stay open.
func (p *Port) Close() error {
	var err error
	p.closeOnce.Do(func() {
		close(p.done)
		err = p.ln.Close()
	})
	p.wg.Wait()
	return err
}

// acceptWaits bound the accept loop's waits while it is out of file
// descriptors (jittered, 5ms to 1s).
var acceptWaits = backoff.Policy{Base: 5 * time.Millisecond, Max: time.Second}

func (p *Port) acceptLoop() {
	defer p.wg.Done()
	var delay time.Duration
	for {
		conn, err := p.ln.Accept()
		if err != nil {
			select {
			case <-p.done:
				return
			default:
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				delay = acceptWaits.Next(delay)
				time.Sleep(delay) // out of file descriptors: back off, as net/http does
				continue
			}
			p.opts.Logger.Error("server port accept", "err", err)
			return
		}
		delay = 0
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.route(conn)
		}()
	}
}

// route reads a connection's kind byte and hands it to its protocol.
func (p *Port) route(conn net.Conn) {
	conn.SetReadDeadline(time.Now().Add(kindTimeout))
	var b [1]byte
	if _, err := conn.Read(b[:]); err != nil {
		conn.Close()
		return
	}
	conn.SetReadDeadline(time.Time{})
	q, ok := p.queues[Kind(b[0])]
	if !ok {
		p.opts.Logger.Warn("server port: closing connection", "remote", conn.RemoteAddr(), "err", fmt.Errorf("%w %#x", ErrUnknownKind, b[0]))
		if misdirected(b[0]) {
			answerMisdirected(conn)
		}
		conn.Close()
		return
	}
	if p.opts.WrapServer != nil {
		wrapped, err := p.opts.WrapServer(conn)
		if err != nil {
			p.opts.Logger.Warn("server port: closing connection", "remote", conn.RemoteAddr(), "kind", Kind(b[0]), "err", err)
			conn.Close()
			return
		}
		conn = wrapped
	}
	select {
	case q.conns <- conn:
	case <-q.closed:
		conn.Close()
	case <-p.done:
		conn.Close()
	}
}

// misdirected reports whether a connection's first byte is a person's
// client that was given this port for the HTTP API: the first letter of an
// HTTP method, or a TLS handshake record.
func misdirected(first byte) bool {
	return first >= 'A' && first <= 'Z' || first == 0x16
}

// wrongPortAnswer tells such a client, in plain HTTP (a TLS client reports
// a reply that is not TLS), where the API is instead of closing silently,
// which clients retry as a network error.
var wrongPortAnswer = []byte("HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: " +
	strconv.Itoa(len(wrongPortBody)) + "\r\n\r\n" + wrongPortBody)

const wrongPortBody = `{"error":"this is a Strata server's --raft-addr port, where servers talk to each other; the HTTP API is on the server's --http-addr (default port 4680)","code":"server-port"}`

// answerMisdirected writes wrongPortAnswer, then reads what the client
// still sends (briefly, boundedly) so that closing does not reset the
// connection before the client has read the answer.
func answerMisdirected(conn net.Conn) {
	conn.SetDeadline(time.Now().Add(time.Second))
	if _, err := conn.Write(wrongPortAnswer); err != nil {
		return
	}
	io.Copy(io.Discard, io.LimitReader(conn, 64<<10))
}

// Dial opens a connection of kind to the server port at addr.
func (p *Port) Dial(ctx context.Context, kind Kind, addr string) (net.Conn, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.opts.DialTimeout)
		defer cancel()
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if dl, ok := ctx.Deadline(); ok {
		conn.SetWriteDeadline(dl)
	}
	if _, err := conn.Write([]byte{byte(kind)}); err != nil {
		conn.Close()
		return nil, fmt.Errorf("server port %s: send kind: %w", addr, err)
	}
	conn.SetWriteDeadline(time.Time{})
	if p.opts.WrapClient != nil {
		wrapped, err := p.opts.WrapClient(conn, addr)
		if err != nil {
			conn.Close()
			return nil, fmt.Errorf("server port %s: %w", addr, err)
		}
		conn = wrapped
	}
	return conn, nil
}

// Raft returns the stream layer raft's network transport runs on.
func (p *Port) Raft() raft.StreamLayer { return raftLayer{p.queues[KindRaft]} }

// HTTP returns the listener of the servers' own HTTP.
func (p *Port) HTTP() net.Listener { return p.queues[KindHTTP] }

// queue is a net.Listener fed by the port's accept loop with the
// connections of one kind.
type queue struct {
	port      *Port
	conns     chan net.Conn
	closeOnce sync.Once
	closed    chan struct{}
}

// ErrClosed is returned by Accept once the port is closed.
var ErrClosed = errors.New("server port closed")

func (q *queue) Accept() (net.Conn, error) {
	select {
	case c := <-q.conns:
		return c, nil
	case <-q.closed:
		return nil, ErrClosed
	case <-q.port.done:
		return nil, ErrClosed
	}
}

// Close stops handing out connections of this kind; later ones are closed
// on arrival. The port itself stays open until Port.Close.
func (q *queue) Close() error {
	q.closeOnce.Do(func() { close(q.closed) })
	return nil
}

func (q *queue) Addr() net.Addr { return q.port.advertise }

type raftLayer struct{ *queue }

var _ raft.StreamLayer = raftLayer{}

func (l raftLayer) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return l.port.Dial(ctx, KindRaft, string(address))
}

// advertiseAddr is the address raft advertises (it uses Addr().String()).
type advertiseAddr string

func (a advertiseAddr) Network() string { return "tcp" }
func (a advertiseAddr) String() string  { return string(a) }
