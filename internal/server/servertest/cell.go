// Package servertest runs cells of several Strata servers inside a test
// process, on loopback ports that stay the same across restarts, for tests
// of formation, forwarding, readiness and failover. It is for tests only.
package servertest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/nodeauth"
	"github.com/strata-dev/strata/internal/server"
)

// Cell is a cell of servers in this process.
type Cell struct {
	t         testing.TB
	joinToken string
	Configs   []server.Config
	Servers   []*server.Server // nil while stopped
}

// FreeAddr returns a loopback host:port that was free a moment ago.
func FreeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// Logger is silent unless the test runs with -v.
func Logger() *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// Start starts n servers that form one cell with --bootstrap-expect n,
// every one naming only the first in --join, as an operator would. tweak,
// when set, adjusts each server's configuration first.
func Start(t testing.TB, n int, tweak func(i int, c *server.Config)) *Cell {
	t.Helper()
	c := &Cell{t: t, Servers: make([]*server.Server, n), joinToken: nodeauth.NewSecret()}
	raftAddrs := make([]string, n)
	for i := range n {
		raftAddrs[i] = FreeAddr(t)
	}
	for i := range n {
		cfg := server.Config{DataDir: t.TempDir(), HTTPAddr: FreeAddr(t), RaftAddr: raftAddrs[i],
			BootstrapExpect: n, HeartbeatTTL: time.Hour, Workers: 1,
			Logger: Logger().With("server", i+1), JoinToken: c.joinToken}
		if tweak != nil {
			tweak(i, &cfg)
		}
		c.Configs = append(c.Configs, cfg)
	}
	for i := range n {
		if i > 0 {
			c.Configs[i].Join = []string{c.Configs[0].RaftAddr}
		}
		c.firstStart(i)
	}
	t.Cleanup(func() {
		for i := range c.Servers {
			c.Stop(i)
		}
	})
	return c
}

// firstStart starts server i for the first time. A port picked free a
// moment ago may have been taken since (by any process's outgoing
// connection): then the server gets new ones.
func (c *Cell) firstStart(i int) {
	c.t.Helper()
	for try := 0; ; try++ {
		s, err := server.New(c.Configs[i])
		if err == nil {
			c.Servers[i] = s
			return
		}
		if !errors.Is(err, syscall.EADDRINUSE) || try == 5 {
			c.t.Fatalf("start server %d: %v", i+1, err)
		}
		c.Configs[i].HTTPAddr, c.Configs[i].RaftAddr = FreeAddr(c.t), FreeAddr(c.t)
	}
}

// Add starts one more server with cfg (say, one that joins the running
// cell) and returns its index.
func (c *Cell) Add(cfg server.Config) int {
	c.t.Helper()
	c.Configs = append(c.Configs, cfg)
	c.Servers = append(c.Servers, nil)
	i := len(c.Servers) - 1
	c.firstStart(i)
	return i
}

// StartServer starts (or restarts, on its data dir) server i.
func (c *Cell) StartServer(i int) {
	c.t.Helper()
	s, err := server.New(c.Configs[i])
	if err != nil {
		c.t.Fatalf("start server %d: %v", i+1, err)
	}
	c.Servers[i] = s
}

// Stop stops server i (a clean shutdown; its data dir stays).
func (c *Cell) Stop(i int) {
	if c.Servers[i] != nil {
		c.Servers[i].Close()
		c.Servers[i] = nil
	}
}

// WaitReady waits until server i serves from its state (GET
// /v1/status/ready answers 200).
func (c *Cell) WaitReady(i int) {
	c.t.Helper()
	Eventually(c.t, 30*time.Second, fmt.Sprintf("server %d ready", i+1), func() error {
		resp, err := c.httpClient().Get(c.Addr(i) + "/v1/status/ready")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s", resp.Status)
		}
		return nil
	})
}

// Addr is server i's HTTP base URL.
func (c *Cell) Addr(i int) string {
	if c.Configs[i].TLS != nil {
		return "https://" + c.Configs[i].HTTPAddr
	}
	return "http://" + c.Configs[i].HTTPAddr
}

// Addrs lists every server's HTTP base URL.
func (c *Cell) Addrs() []string {
	out := make([]string, len(c.Configs))
	for i := range c.Configs {
		out[i] = c.Addr(i)
	}
	return out
}

// Leader waits until a running server leads and answers reads, and
// returns its index.
func (c *Cell) Leader() int {
	c.t.Helper()
	found := -1
	Eventually(c.t, 30*time.Second, "a leader that answers", func() error {
		for i, s := range c.Servers {
			if s == nil || !s.IsLeader() {
				continue
			}
			cl := c.ClientOf(c.Addr(i))
			cl.RetryFor = time.Millisecond
			// A cell with ACLs refuses the read (no token): it answered.
			var refused *api.Error
			if _, _, err := cl.Nodes(context.Background(), nil); err != nil && !(errors.As(err, &refused) && refused.StatusCode == http.StatusForbidden) {
				return fmt.Errorf("leader %d: %v", i+1, err)
			}
			found = i
			return nil
		}
		return fmt.Errorf("no leader among the running servers")
	})
	return found
}

// Follower returns the index of a running server other than leader.
func (c *Cell) Follower(leader int) int {
	for i, s := range c.Servers {
		if i != leader && s != nil {
			return i
		}
	}
	c.t.Fatal("no running follower")
	return -1
}

// Eventually polls cond every 20ms until it returns nil, failing the test
// after d.
func Eventually(t testing.TB, d time.Duration, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s: %v", d, what, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
