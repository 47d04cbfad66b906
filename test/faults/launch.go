package faults

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/strata-dev/strata/api"
)

// How the scenarios start servers and agents and reach the API, in one
// place: a cell that needs other flags changes these functions only. The
// cell runs TLS (faultnet gives each daemon its role's certificate and
// the test's clients a CLI one).

// Ports every server uses on its own host.
const (
	httpPort = 4680
	raftPort = 4681
)

// serverArgv is the command line of server i of the cell.
func (c *Cell) serverArgv(s *Server) []string {
	argv := []string{c.bin, "server",
		"--data-dir", s.DataDir,
		"--http-addr", s.Host.Addr(httpPort),
		"--raft-addr", s.Host.Addr(raftPort),
		"--bootstrap-expect", fmt.Sprint(len(c.Servers)),
		"--heartbeat-ttl", c.opts.HeartbeatTTL.String(),
		"--workers", "1",
	}
	// Every server knows every other: a server restarted on an empty data
	// dir finds the cell through any of them.
	for _, o := range c.Servers {
		if o != s {
			argv = append(argv, "--join", o.Host.Addr(raftPort))
		}
	}
	return argv
}

// agentArgv is the command line of an agent.
func (c *Cell) agentArgv(a *Agent) []string {
	argv := []string{c.bin, "agent",
		"--servers", strings.Join(c.ServerURLs(), ","),
		"--data-dir", a.DataDir,
		"--name", a.Name,
		"--cpu-total", a.CPU,
		"--memory-total", a.Memory,
		"--agent-http-addr", a.Host.Addr(4690),
	}
	for _, l := range a.Labels {
		argv = append(argv, "--label", l)
	}
	return argv
}

// ServerURLs lists every server's API address.
func (c *Cell) ServerURLs() []string {
	out := make([]string, len(c.Servers))
	for i, s := range c.Servers {
		out[i] = s.URL()
	}
	return out
}

// URL is the server's API address (https: the cell runs TLS, faultnet.Net).
func (s *Server) URL() string { return s.Host.URL(httpPort) }

// ClientOptions shape an API client of the test.
type ClientOptions struct {
	// Servers it may use; nil: all of them.
	Servers []*Server
	// Attempt bounds one HTTP attempt; RetryFor all of a call's attempts
	// (api.Client's failover and retries).
	Attempt, RetryFor time.Duration
}

// Client returns an API client that runs on the cell's client host: its
// connections start in that namespace, so cuts apply to them.
func (c *Cell) Client(o ClientOptions) *api.Client {
	servers := o.Servers
	if servers == nil {
		servers = c.Servers
	}
	var urls []string
	for _, s := range servers {
		urls = append(urls, s.URL())
	}
	cl := api.NewClientFor(urls)
	cl.HTTP = &http.Client{Timeout: o.Attempt, Transport: c.transport()}
	cl.RetryFor = o.RetryFor
	return cl
}

// rawHTTP is a plain client on the client host, for the servers' status
// endpoints.
func (c *Cell) rawHTTP(timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, Transport: c.transport()}
}

// transport is the one connection pool of every client of the test: a
// pool per client would leave idle connections behind each status poll,
// and the servers cap connections per client address (256), answering
// 429 past it.
func (c *Cell) transport() *http.Transport {
	c.transportOnce.Do(func() {
		c.pool = &http.Transport{
			DialContext:         c.ClientHost.DialContext,
			TLSClientConfig:     c.Net.ClientTLS(),
			MaxIdleConnsPerHost: 32,
			IdleConnTimeout:     30 * time.Second,
		}
	})
	return c.pool
}
