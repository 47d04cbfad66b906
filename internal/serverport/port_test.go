package serverport

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

func listen(t *testing.T, opts Options) *Port {
	t.Helper()
	p, err := Listen("127.0.0.1:0", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// TestKindsReachTheirListener: raft and HTTP connections on one port end
// up at their own listener, byte streams intact.
func TestKindsReachTheirListener(t *testing.T) {
	p := listen(t, Options{})
	go func() {
		for {
			c, err := p.Raft().Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); io.Copy(c, c) }() // echo
		}
	}()
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "http %s", r.URL.Path)
	})}
	go srv.Serve(p.HTTP())
	t.Cleanup(func() { srv.Close() })

	conn, err := p.Raft().Dial("127.0.0.1:1", time.Second) // a wrong address fails
	if err == nil {
		conn.Close()
		t.Fatal("dial to a closed port succeeded")
	}
	conn, err = p.Raft().Dial(raft.ServerAddress(p.Raft().Addr().String()), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(conn, "append entries")
	line, err := bufio.NewReader(conn).ReadString('\n')
	conn.Close()
	if err != nil || line != "append entries\n" {
		t.Fatalf("raft echo: %q %v", line, err)
	}

	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
		return p.Dial(ctx, KindHTTP, addr)
	}}}
	resp, err := client.Get("http://" + p.Addr() + "/v1/internal/hello")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "http /v1/internal/hello" {
		t.Fatalf("http over the server port: %q", b)
	}
}

// TestUnknownKindIsClosed: a stray client (an HTTP request sent to the
// raft port by mistake) is told where the API is and closed, a stray of
// no known protocol is closed, and the port keeps serving.
func TestUnknownKindIsClosed(t *testing.T) {
	p := listen(t, Options{})
	conn, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(conn, "GET /v1/nodes HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("an HTTP request to the server port got no answer: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "--http-addr") || !strings.Contains(string(body), `"code":"server-port"`) {
		t.Fatalf("an HTTP request to the server port: %d %s", resp.StatusCode, body)
	}
	conn.Close()
	conn, err = net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	conn.Write([]byte{0x01})
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	// Closed with unread bytes, the peer may see a reset rather than EOF.
	if n, err := conn.Read(make([]byte, 1)); n != 0 || !(errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)) {
		t.Fatalf("stray connection: read %d, %v; want it closed", n, err)
	}
	conn.Close()
	go func() {
		c, err := p.Raft().Accept()
		if err == nil {
			c.Close()
		}
	}()
	c, err := p.Dial(context.Background(), KindRaft, p.Addr())
	if err != nil {
		t.Fatalf("the port stopped serving after a stray connection: %v", err)
	}
	c.Close()
}

// TestWrapHooksSeeEveryConnection: the wrap hooks (where TLS plugs in) run
// on both ends, after the kind byte.
func TestWrapHooksSeeEveryConnection(t *testing.T) {
	var served, dialled int
	p := listen(t, Options{
		WrapServer: func(c net.Conn) (net.Conn, error) { served++; return c, nil },
		WrapClient: func(c net.Conn, addr string) (net.Conn, error) {
			dialled++
			if strings.HasSuffix(addr, ":1") {
				return nil, errors.New("refused by wrapper")
			}
			return c, nil
		},
	})
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := p.HTTP().Accept()
		if err == nil {
			accepted <- c
		}
	}()
	c, err := p.Dial(context.Background(), KindHTTP, p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	select {
	case sc := <-accepted:
		sc.Close()
	case <-time.After(5 * time.Second):
		t.Fatal("connection not accepted")
	}
	if served != 1 || dialled != 1 {
		t.Fatalf("wrap hooks ran %d (server) and %d (client) times, want 1 and 1", served, dialled)
	}
}

func TestUnspecifiedBindNeedsAdvertise(t *testing.T) {
	if _, err := Listen("0.0.0.0:0", Options{}); !errors.Is(err, ErrNotAdvertisable) {
		t.Fatalf("Listen(0.0.0.0:0) = %v, want ErrNotAdvertisable", err)
	}
	p, err := Listen("0.0.0.0:0", Options{Advertise: "10.0.0.7:4681"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if p.Addr() != "10.0.0.7:4681" || p.Raft().Addr().String() != "10.0.0.7:4681" {
		t.Fatalf("advertised %s / %s", p.Addr(), p.Raft().Addr())
	}
}

// TestCloseOneKindKeepsTheOther: closing the HTTP listener (the HTTP server
// shutting down) leaves raft's listener serving.
func TestCloseOneKindKeepsTheOther(t *testing.T) {
	p := listen(t, Options{})
	p.HTTP().Close()
	if _, err := p.HTTP().Accept(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Accept on a closed kind: %v", err)
	}
	got := make(chan error, 1)
	go func() {
		c, err := p.Raft().Accept()
		if err == nil {
			c.Close()
		}
		got <- err
	}()
	c, err := p.Dial(context.Background(), KindRaft, p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if err := <-got; err != nil {
		t.Fatalf("raft accept after HTTP closed: %v", err)
	}
}
