package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/test/faultnet"
)

// Options shape a cell.
type Options struct {
	Servers int // default 3
	// Agents are started after the servers, each on a host of its own.
	Agents []AgentSpec
	// HeartbeatTTL is the servers' --heartbeat-ttl; default 10s.
	HeartbeatTTL time.Duration
}

// AgentSpec describes one agent.
type AgentSpec struct {
	Name        string   // also its host's name
	CPU, Memory string   // advertised capacity; default 64000 and 64GiB
	Labels      []string // key=value
}

// Cell is a cell of real server and agent processes on a faultnet network,
// with a client host from which the test reaches the API.
type Cell struct {
	t          testing.TB
	bin        string
	opts       Options
	Net        *faultnet.Net
	Servers    []*Server
	Agents     []*Agent
	ClientHost *faultnet.Host

	transportOnce sync.Once
	pool          *http.Transport
}

// Server is one `strata server` of the cell.
type Server struct {
	Index   int // 0-based; named s1, s2, ... as its host
	Host    *faultnet.Host
	Proc    *faultnet.Process
	DataDir string
}

// Agent is one `strata agent` of the cell.
type Agent struct {
	Name, CPU, Memory string
	Labels            []string
	Host              *faultnet.Host
	Proc              *faultnet.Process
	DataDir           string
}

// StartCell starts a cell and waits until it has a leader, every server
// is a ready voter and every agent's node is ready. bin is the strata
// binary. It skips the test when faultnet cannot run here.
func StartCell(t testing.TB, bin string, o Options) *Cell {
	t.Helper()
	if o.Servers == 0 {
		o.Servers = 3
	}
	if o.HeartbeatTTL == 0 {
		o.HeartbeatTTL = 10 * time.Second
	}
	n := faultnet.New(t)
	c := &Cell{t: t, bin: bin, opts: o, Net: n}
	for i := range o.Servers {
		h := n.AddHost(fmt.Sprintf("s%d", i+1))
		c.Servers = append(c.Servers, &Server{Index: i, Host: h, DataDir: filepath.Join(n.Dir(), h.Name()+"-data")})
	}
	c.ClientHost = n.AddHost("client")
	for _, s := range c.Servers {
		s.Proc = s.Host.Start("server", c.serverArgv(s)...)
	}
	c.WaitHealthy(60 * time.Second)
	for _, spec := range o.Agents {
		a := &Agent{Name: spec.Name, CPU: spec.CPU, Memory: spec.Memory, Labels: spec.Labels}
		if a.CPU == "" {
			a.CPU = "64000"
		}
		if a.Memory == "" {
			a.Memory = "64GiB"
		}
		a.Host = n.AddHost(spec.Name)
		a.DataDir = filepath.Join(n.Dir(), spec.Name+"-data")
		a.Proc = a.Host.Start("agent", c.agentArgv(a)...)
		c.Agents = append(c.Agents, a)
	}
	for _, a := range c.Agents {
		faultnet.Eventually(t, 30*time.Second, "agent "+a.Name+" ready", func() error { return c.nodeReady(a.Name) })
	}
	return c
}

// statusOf is a server's own view (GET /v1/status/leader, served without
// a quorum).
type statusOf struct {
	Leader   string `json:"leader"`
	IsLeader bool   `json:"isLeader"`
}

// status asks server s for its view.
func (c *Cell) status(s *Server) (statusOf, error) {
	var st statusOf
	resp, err := c.rawHTTP(time.Second).Get(s.URL() + "/v1/status/leader")
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return st, fmt.Errorf("server %s: %s", s.Host.Name(), resp.Status)
	}
	return st, json.NewDecoder(resp.Body).Decode(&st)
}

// ready reports whether server s serves from its state.
func (c *Cell) ready(s *Server) error {
	resp, err := c.rawHTTP(time.Second).Get(s.URL() + "/v1/status/ready")
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		return fmt.Errorf("server %s: %s", s.Host.Name(), resp.Status)
	}
	return nil
}

// Leaders lists the servers among among that say they lead.
func (c *Cell) Leaders(among []*Server) []*Server {
	var out []*Server
	for _, s := range among {
		if st, err := c.status(s); err == nil && st.IsLeader {
			out = append(out, s)
		}
	}
	return out
}

// Leader waits until exactly one of among leads and returns it.
func (c *Cell) Leader(among []*Server, timeout time.Duration) *Server {
	c.t.Helper()
	var l *Server
	faultnet.Eventually(c.t, timeout, "one leader", func() error {
		ls := c.Leaders(among)
		if len(ls) != 1 {
			return fmt.Errorf("%d servers say they lead", len(ls))
		}
		l = ls[0]
		return nil
	})
	return l
}

// Others returns the cell's servers but s.
func (c *Cell) Others(s *Server) []*Server {
	var out []*Server
	for _, o := range c.Servers {
		if o != s {
			out = append(out, o)
		}
	}
	return out
}

// healthy reports whether the cell has one leader, every server is ready
// and the leader's configuration holds every server as a voter.
func (c *Cell) healthy() error {
	for _, s := range c.Servers {
		if err := c.ready(s); err != nil {
			return err
		}
	}
	if ls := c.Leaders(c.Servers); len(ls) != 1 {
		return fmt.Errorf("%d servers say they lead", len(ls))
	}
	cl := c.Client(ClientOptions{Attempt: 2 * time.Second, RetryFor: time.Second})
	conf, err := cl.RaftConfiguration(context.Background(), nil)
	if err != nil {
		return err
	}
	voters := 0
	for _, s := range conf.Servers {
		for _, o := range c.Servers {
			if s.Address == o.Host.Addr(raftPort) && s.Voter {
				voters++
			}
		}
	}
	if voters != len(c.Servers) || len(conf.Servers) != len(c.Servers) {
		return fmt.Errorf("configuration has %d servers, %d of ours as voters: %+v", len(conf.Servers), voters, conf.Servers)
	}
	return nil
}

// WaitHealthy waits until the cell is healthy: one leader, every server
// ready and a voter.
func (c *Cell) WaitHealthy(timeout time.Duration) {
	c.t.Helper()
	faultnet.Eventually(c.t, timeout, "a healthy cell", c.healthy)
}

func (c *Cell) nodeReady(name string) error {
	cl := c.Client(ClientOptions{Attempt: 2 * time.Second, RetryFor: time.Second})
	nodes, _, err := cl.Nodes(context.Background(), nil)
	if err != nil {
		return err
	}
	for _, n := range nodes {
		if n.Name == name {
			if n.Status != api.NodeReady {
				return fmt.Errorf("node %s is %s", name, n.Status)
			}
			return nil
		}
	}
	return fmt.Errorf("node %s not registered", name)
}

// WipeAndRestart kills server s, removes its data dir and starts it again
// with the same flags: it must join the running cell as a new member.
func (c *Cell) WipeAndRestart(s *Server) {
	c.t.Helper()
	s.Proc.Kill()
	if err := os.RemoveAll(s.DataDir); err != nil {
		c.t.Fatal(err)
	}
	s.Proc.Restart()
}

// Logs returns the last lines of every process's log, for failures.
func (c *Cell) Logs(lines int) string {
	var b strings.Builder
	tail := func(name, log string) {
		l := strings.Split(strings.TrimRight(log, "\n"), "\n")
		fmt.Fprintf(&b, "--- %s (last %d lines)\n%s\n", name, min(lines, len(l)), strings.Join(l[max(0, len(l)-lines):], "\n"))
	}
	for _, s := range c.Servers {
		tail(s.Host.Name(), s.Proc.Log())
	}
	for _, a := range c.Agents {
		tail(a.Name, a.Proc.Log())
	}
	return b.String()
}

// staleRead asks server s alone for the workload list with ?stale, which
// any ready server answers from its own state.
func (c *Cell) staleRead(s *Server) error {
	resp, err := c.rawHTTP(2 * time.Second).Get(s.URL() + "/v1/workloads?stale")
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		return fmt.Errorf("%s", resp.Status)
	}
	return nil
}

// watchElection starts polling among for a leader (every 20 ms) and
// returns a function that waits for the first and says how long after t0
// it was seen leading. Start it right after injecting the fault.
func (c *Cell) watchElection(t0 time.Time, among []*Server) func() (time.Duration, error) {
	done := make(chan struct{})
	var took time.Duration
	var err error
	go func() {
		defer close(done)
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			if len(c.Leaders(among)) == 1 {
				took = time.Since(t0)
				return
			}
			time.Sleep(20 * time.Millisecond) // the poll period
		}
		err = fmt.Errorf("no leader among the others within 30s")
	}()
	return func() (time.Duration, error) {
		<-done
		return took, err
	}
}
