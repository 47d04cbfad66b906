package httplimit

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// serve runs h behind the limits of c on a free loopback port and returns
// its address and listener.
func serve(t *testing.T, c Config, h http.Handler) (string, *Listener) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := Listen(ln, c, slog.New(slog.NewTextHandler(io.Discard, nil)))
	srv := NewServer(h, c)
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String(), l
}

// dialFrom connects to addr from the loopback address from (127.0.0.x), so
// that one test can be several clients.
func dialFrom(t *testing.T, from, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// closedWithin reports whether the server closes c within d, reading and
// discarding whatever it sends first.
func closedWithin(c net.Conn, d time.Duration) bool {
	c.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout())
}

var ok = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	w.Write([]byte("ok\n"))
})

// Issue 7, defect 8: idle keep-alive connections stayed open for good, and
// slow headers and bodies were held as long as the client liked.
func TestTimeoutsCloseSlowAndIdleConnections(t *testing.T) {
	c := Config{ReadHeaderTimeout: 200 * time.Millisecond, ReadTimeout: 400 * time.Millisecond, IdleTimeout: 200 * time.Millisecond}
	addr, _ := serve(t, c, ok)

	t.Run("idle keep-alive", func(t *testing.T) {
		conn := dialFrom(t, "127.0.0.1", addr)
		io.WriteString(conn, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("first request: %v %v", resp, err)
		}
		if !closedWithin(conn, 3*time.Second) {
			t.Fatal("an idle keep-alive connection was still open 3s after a 200ms idle timeout")
		}
	})
	t.Run("nothing sent", func(t *testing.T) {
		if !closedWithin(dialFrom(t, "127.0.0.1", addr), 3*time.Second) {
			t.Fatal("a connection that sent nothing was still open 3s after a 200ms header timeout")
		}
	})
	t.Run("slow headers", func(t *testing.T) {
		conn := dialFrom(t, "127.0.0.1", addr)
		io.WriteString(conn, "GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ")
		if !closedWithin(conn, 3*time.Second) {
			t.Fatal("half a header block was held 3s")
		}
	})
	t.Run("slow body", func(t *testing.T) {
		conn := dialFrom(t, "127.0.0.1", addr)
		io.WriteString(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nabc")
		if !closedWithin(conn, 3*time.Second) {
			t.Fatal("a body that stopped after 3 of 1000 bytes was held 3s")
		}
	})
}

// A long poll and a stream legitimately outlast the read and write
// timeouts: Extend and Stream give them their time.
func TestLongRequestsOutliveTimeouts(t *testing.T) {
	c := Config{ReadTimeout: 200 * time.Millisecond, WriteTimeout: 200 * time.Millisecond}
	mux := http.NewServeMux()
	mux.HandleFunc("/poll", func(w http.ResponseWriter, r *http.Request) {
		Extend(w, 2*time.Second)
		select { // a blocking query waiting for a change that comes late
		case <-time.After(700 * time.Millisecond):
		case <-r.Context().Done():
			return // what a read deadline that was not extended does
		}
		w.Write([]byte("changed\n"))
	})
	mux.HandleFunc("/unextended", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(700 * time.Millisecond):
			w.Write([]byte("changed\n"))
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/stream", func(w http.ResponseWriter, r *http.Request) {
		out := Stream(w, 200*time.Millisecond)
		for i := range 8 {
			if _, err := io.WriteString(out, strings.Repeat("x", 10)+"\n"); err != nil {
				return
			}
			if i < 7 {
				time.Sleep(100 * time.Millisecond) // a log that grows slowly: 0.7s in all
			}
		}
	})
	addr, _ := serve(t, c, mux)
	get := func(path string) (string, error) {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	if body, err := get("/poll"); err != nil || body != "changed\n" {
		t.Fatalf("long poll: %q, %v", body, err)
	}
	if body, err := get("/stream"); err != nil || body != strings.Repeat(strings.Repeat("x", 10)+"\n", 8) {
		t.Fatalf("stream: %q, %v", body, err)
	}
	// The control: without Extend the same wait is cut by the timeouts.
	if body, err := get("/unextended"); err == nil && body == "changed\n" {
		t.Fatal("a 700ms wait outlived 200ms timeouts without Extend: the test proves nothing")
	}
}

// A stream whose reader stopped reading is dropped after its per-write
// deadline instead of holding its goroutine and descriptor for good.
func TestStalledStreamReaderIsDropped(t *testing.T) {
	done := make(chan error, 1)
	addr, _ := serve(t, Config{}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		out := Stream(w, 300*time.Millisecond)
		chunk := make([]byte, 64<<10)
		for {
			if _, err := out.Write(chunk); err != nil {
				done <- err
				return
			}
		}
	}))
	conn := dialFrom(t, "127.0.0.1", addr)
	io.WriteString(conn, "GET / HTTP/1.1\r\nHost: x\r\n\r\n") // and never read
	select {
	case err := <-done:
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Fatalf("stream ended with %v, want a write timeout", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a stream nobody reads was still writing after 10s")
	}
}

// readAnswer reads the HTTP answer a refused connection gets.
func readAnswer(t *testing.T, c net.Conn) (int, string) {
	t.Helper()
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	defer resp.Body.Close()
	var body struct{ Error, Code string }
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil && resp.StatusCode != 200 {
		t.Fatalf("answer %d without a JSON error: %v", resp.StatusCode, err)
	}
	if resp.StatusCode != 200 && (body.Error == "" || resp.Header.Get("Retry-After") == "") {
		t.Fatalf("answer %d says too little: %+v %v", resp.StatusCode, body, resp.Header)
	}
	return resp.StatusCode, body.Code
}

// waitOpen waits until the listener holds want connections: Accept runs
// in the server's goroutine, after the client's dial returned.
func waitOpen(t *testing.T, l *Listener, want int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if n, _ := l.Open(); n == want {
			return
		}
		if time.Now().After(deadline) {
			n, by := l.Open()
			t.Fatalf("%d connections open (%v), want %d", n, by, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestConnectionCaps(t *testing.T) {
	addr, l := serve(t, Config{MaxConnsPerClient: 2, MaxConns: 4}, ok)
	a1, a2 := dialFrom(t, "127.0.0.2", addr), dialFrom(t, "127.0.0.2", addr)
	waitOpen(t, l, 2)
	if status, code := readAnswer(t, dialFrom(t, "127.0.0.2", addr)); status != http.StatusTooManyRequests || code != CodeTooManyConnections {
		t.Fatalf("third connection of one client: %d %s, want 429 %s", status, code, CodeTooManyConnections)
	}
	if status, _ := readAnswer(t, dialFrom(t, "127.0.0.3", addr)); status != 200 {
		t.Fatalf("another client: %d, want 200", status)
	}
	dialFrom(t, "127.0.0.4", addr)
	waitOpen(t, l, 4)
	if status, code := readAnswer(t, dialFrom(t, "127.0.0.5", addr)); status != http.StatusServiceUnavailable || code != CodeServerBusy {
		t.Fatalf("connection over the total: %d %s, want 503 %s", status, code, CodeServerBusy)
	}
	a1.Close()
	a2.Close()
	waitOpen(t, l, 2)
	if status, _ := readAnswer(t, dialFrom(t, "127.0.0.2", addr)); status != 200 {
		t.Fatalf("after closing its connections the client is refused: %d", status)
	}
}

func TestDefaults(t *testing.T) {
	c := Config{}.WithDefaults()
	if c.ReadHeaderTimeout != DefaultReadHeaderTimeout || c.ReadTimeout != DefaultReadTimeout || c.WriteTimeout != DefaultWriteTimeout ||
		c.IdleTimeout != DefaultIdleTimeout || c.MaxConnsPerClient != DefaultMaxConnsPerClient || c.MaxConns < minMaxConns {
		t.Fatalf("defaults %+v", c)
	}
	off := Config{ReadTimeout: -1, MaxConnsPerClient: -1}.WithDefaults()
	if off.ReadTimeout != 0 || off.MaxConnsPerClient != 0 {
		t.Fatalf("negative values must turn limits off: %+v", off)
	}
}
