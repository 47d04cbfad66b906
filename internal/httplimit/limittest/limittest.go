// Package limittest checks, from outside, that an HTTP server runs behind
// httplimit: for the tests of the servers that use it (the control plane's
// API, the agent's), so each shows its limits apply without repeating how.
package limittest

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// CheckCapAndHeaderTimeout asserts what a server configured with
// MaxConnsPerClient 1 and a ReadHeaderTimeout well under 5 s does at
// hostPort: a second connection of this client is answered 429, and the
// first, which sends nothing, is closed by the header timeout.
func CheckCapAndHeaderTimeout(t *testing.T, hostPort string) {
	t.Helper()
	first, err := net.Dial("tcp", hostPort)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	second, err := net.Dial("tcp", hostPort)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	second.SetReadDeadline(time.Now().Add(5 * time.Second))
	if resp, err := http.ReadResponse(bufio.NewReader(second), nil); err != nil || resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("second connection of one client with a cap of 1: %v %v", resp, err)
	}
	first.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err = io.Copy(io.Discard, first)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("a connection that sent nothing outlived the header timeout by 5s")
	}
}
