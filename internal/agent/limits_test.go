package agent

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/internal/httplimit"
)

// Issue 7, defect 8, on the agent: its own API (logs, health) closes
// connections that send nothing and caps the connections of one client.
func TestAgentHTTPLimitsApply(t *testing.T) {
	srv := newFakeServer()
	ag := startAgent(t, srv, t.TempDir(), func(c *Config) {
		c.HTTP = httplimit.Config{ReadHeaderTimeout: 200 * time.Millisecond, MaxConnsPerClient: 1}
	})
	hostPort := strings.TrimPrefix(srv.node(ag.NodeID()).HTTPAddr, "http://")
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
		t.Fatal("a silent connection to the agent outlived a 200ms header timeout by 5s")
	}
}
