package server

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/httplimit"
	"github.com/strata-dev/strata/internal/httplimit/limittest"
)

// slowServerEnv makes the test binary a server with 1,024 file descriptors
// (TestSlowClientsServerProcess), so that slow clients in this process can
// exhaust that server's descriptors without exhausting their own.
const slowServerEnv = "STRATA_TEST_SLOW_CLIENTS_SERVER"

// Issue 7, defect 8: with 1,024 file descriptors, 1,100 clients that
// connected and sent nothing (or half a request) made the CLI time out.
// Here 2,000 such clients of one address hold or knock at a server limited
// to 1,024 descriptors, and the API client, the CLI's transport, must still
// be answered promptly.
func TestAPIAnswersWhileSlowClientsHoldConnections(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 2,000 connections")
	}
	const slowClients = 2000
	raiseNoFile(t, 2*slowClients+256)

	addr := startSlowClientsServer(t)
	hostPort := strings.TrimPrefix(addr, "http://")

	// One misbehaving client address: a third send nothing, a third half a
	// header block, a third a header and the first bytes of a large body.
	var silent []net.Conn
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}, Timeout: 5 * time.Second}
	start := time.Now()
	for i := range slowClients {
		c, err := d.Dial("tcp", hostPort)
		if err != nil {
			t.Fatalf("slow client %d: %v", i, err)
		}
		t.Cleanup(func() { c.Close() })
		switch i % 3 {
		case 0:
			silent = append(silent, c)
		case 1:
			io.WriteString(c, "GET /v1/nodes HTTP/1.1\r\nHost: x\r\nX-Slow: ")
		case 2:
			io.WriteString(c, "POST /v1/workloads HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\napiVersion: ")
		}
	}
	t.Logf("%d slow connections opened in %v", slowClients, time.Since(start))

	// The CLI, from another address, is answered, every time.
	client := api.NewClient(addr)
	client.HTTP.Timeout = 5 * time.Second
	var took []time.Duration
	for i := range 10 {
		t0 := time.Now()
		if _, _, err := client.Nodes(context.Background(), nil); err != nil {
			t.Fatalf("request %d of the API client with %d slow clients connected: %v", i, slowClients, err)
		}
		took = append(took, time.Since(t0))
	}
	slices.Sort(took)
	t.Logf("API client answered 10 of 10 while %d slow clients were connected; median %v, max %v", slowClients, took[len(took)/2], took[len(took)-1])

	// The slow client's connections past its cap were told why, not left
	// hanging: the last silent ones read a 429.
	refused := 0
	for _, c := range silent[len(silent)-5:] {
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err == nil && resp.StatusCode == http.StatusTooManyRequests {
			refused++
		}
	}
	if refused == 0 {
		t.Fatal("no connection over the per-client cap was answered 429")
	}
}

// TestSlowClientsServerProcess is the server of the test above, run in its
// own process: not a test by itself.
func TestSlowClientsServerProcess(t *testing.T) {
	dir := os.Getenv(slowServerEnv)
	if dir == "" {
		t.Skip("the server process of TestAPIAnswersWhileSlowClientsHoldConnections")
	}
	lim := syscall.Rlimit{Cur: 1024, Max: 1024}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	s := quietServerIn(t, dir)
	fmt.Printf("ADDR %s\n", s.Addr())
	io.Copy(io.Discard, os.Stdin) // until the parent is done
}

// startSlowClientsServer runs TestSlowClientsServerProcess and returns its
// address; the process ends with the test.
func startSlowClientsServer(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestSlowClientsServerProcess$")
	cmd.Env = append(os.Environ(), slowServerEnv+"="+t.TempDir())
	var stderr bytes.Buffer // raft's own log lines; shown when the test fails
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("server process stderr:\n%s", stderr.String())
		}
	})
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		if addr, ok := strings.CutPrefix(lines.Text(), "ADDR "); ok {
			go io.Copy(io.Discard, stdout)
			return addr
		}
	}
	t.Fatalf("the server process printed no address: %v", lines.Err())
	return ""
}

// raiseNoFile lifts this process's descriptor limit to at least need, or
// skips the test when the hard limit does not allow it.
func raiseNoFile(t *testing.T, need uint64) {
	t.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Cur >= need {
		return
	}
	if lim.Max < need {
		t.Skipf("RLIMIT_NOFILE hard limit %d is below the %d descriptors this test needs", lim.Max, need)
	}
	lim.Cur = lim.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
}

// The server's HTTP API runs with the limits: a connection over the cap is
// answered 429, and one that sends nothing is closed by the header timeout.
func TestServerHTTPLimitsApply(t *testing.T) {
	s, err := New(Config{DataDir: t.TempDir(), HTTPAddr: "127.0.0.1:0", HeartbeatTTL: time.Hour,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		HTTP:   httplimit.Config{ReadHeaderTimeout: 200 * time.Millisecond, MaxConnsPerClient: 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	limittest.CheckCapAndHeaderTimeout(t, strings.TrimPrefix(s.Addr(), "http://"))
}
