package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/nodeauth"
	"github.com/strata-dev/strata/internal/pki"
)

var strataBin string

func TestMain(m *testing.M) {
	if os.Geteuid() != 0 {
		fmt.Println("e2e: skipped, needs root for cgroups")
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "strata-e2e-bin")
	if err != nil {
		panic(err)
	}
	strataBin = filepath.Join(dir, "strata")
	build := exec.Command("go", "build", "-o", strataBin, "github.com/strata-dev/strata/cmd/strata")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Println("e2e: building strata:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// proc is one strata daemon the test started.
// syncBuffer is a process's output: the process writes it while the test
// reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

type proc struct {
	cmd  *exec.Cmd
	log  *syncBuffer
	args []string
}

// cell is a test cell: one server and some agents, each a real process.
type cell struct {
	t        *testing.T
	dir      string
	addr     string
	httpAddr string
	ttl      time.Duration
	server   *proc
	agents   map[string]*proc
	// servers are the servers of a cell of several (multiserver_e2e_test.go).
	servers []*proc
	// serverArgs are added to every server's flags.
	serverArgs []string
	// joinToken is the cell's join token (credentialEnv).
	joinToken string
	// apiClient is the test's one client of the cell (client): every
	// api.Client has its own connection pool, so a client per poll would
	// leave a connection open per poll and soon meet the server's cap of
	// connections per client address, which the agents share.
	apiClient     *api.Client
	apiClientAddr string // the c.addr apiClient was made for

	// tlsDir holds the cell's CA and its servers', agents' and CLI's
	// certificates (pki.EnsureDev's layout): every cell the harness runs
	// is a TLS cell, agents join over mutual TLS and talk to each other
	// so (migrations), as in production. A dev cell makes its own in its
	// data dir. plaintext is for a test about plaintext only.
	tlsDir    string
	plaintext bool
	// anonymous: the server lets callers without a client certificate in
	// (newAnonymousCell).
	anonymous bool
	// bin, when set, is the strata binary daemons are started from instead
	// of the one built from this tree (upgrade_e2e_test.go).
	bin string
}

// newTLSDir makes a cell's CA and certificates in dir/tls.
func newTLSDir(t *testing.T, dir string) string {
	t.Helper()
	tlsDir := filepath.Join(dir, "tls")
	if err := pki.EnsureDev(tlsDir); err != nil {
		t.Fatalf("the cell's TLS credentials: %v", err)
	}
	return tlsDir
}

// url is the address of a server's API at hostport, with the cell's scheme.
func (c *cell) url(hostport string) string {
	if c.plaintext {
		return "http://" + hostport
	}
	return "https://" + hostport
}

// client is the test's client of the cell (as the CLI: a CLI certificate
// of the cell's CA).
func (c *cell) client() *api.Client {
	if c.apiClient == nil || c.apiClientAddr != c.addr {
		c.apiClient, c.apiClientAddr = c.newClient(c.addr), c.addr
	}
	return c.apiClient
}

// newClient is a new client of the servers at addr, with its own
// connection pool.
func (c *cell) newClient(addr string) *api.Client {
	if c.plaintext {
		return api.NewClientFor(strings.Split(addr, ","))
	}
	f := pki.CertFiles(c.tlsDir, pki.RoleCLI)
	cl, err := api.NewClientWithTLS(addr, f.CA, f.Cert, f.Key)
	if err != nil {
		// A dev cell makes its credentials as it starts: the calls fail
		// until they are there, and the next call tries again.
		cl = api.NewClientFor(strings.Split(addr, ","))
		c.apiClient = nil
	}
	return cl
}

// httpClient is a raw HTTP client that trusts the cell and presents its
// CLI certificate.
func (c *cell) httpClient(timeout time.Duration) *http.Client {
	tr := &http.Transport{}
	if !c.plaintext {
		f := pki.CertFiles(c.tlsDir, pki.RoleCLI)
		cfg, err := api.ClientTLS(f.CA, f.Cert, f.Key, api.TLSRoleServer)
		if err != nil {
			c.t.Fatalf("the cell's CLI TLS: %v", err)
		}
		tr.TLSClientConfig = cfg
	}
	return &http.Client{Timeout: timeout, Transport: tr}
}

// agentHTTPClient is a raw HTTP client of the cell's agents' own API,
// as a server is one: a server certificate, an agent's expected.
func (c *cell) agentHTTPClient() *http.Client {
	tr := &http.Transport{}
	if !c.plaintext {
		f := pki.CertFiles(c.tlsDir, pki.RoleServer)
		cfg, err := f.ClientConfig(pki.RoleAgent)
		if err != nil {
			c.t.Fatalf("the cell's server TLS: %v", err)
		}
		tr.TLSClientConfig = cfg
	}
	return &http.Client{Timeout: 10 * time.Second, Transport: tr}
}

// credentialEnv is the environment that gives every process of the cell
// its credentials: servers and agents the cell's join token, the CLI the
// cell's CA and a CLI certificate. Every strata process the harness
// starts gets it, so the harness's credentials live here only; spawn adds
// each daemon's own certificate (daemonEnv).
func (c *cell) credentialEnv() []string {
	if c.joinToken == "" {
		c.joinToken = nodeauth.NewSecret()
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "STRATA_") {
			env = append(env, kv)
		}
	}
	env = append(env, "STRATA_JOIN_TOKEN="+c.joinToken)
	if c.plaintext {
		// Plaintext and without ACLs: a server refuses that unless told to
		// let anonymous callers in.
		return append(env, "STRATA_INSECURE_PLAINTEXT=1", "STRATA_INSECURE_ALLOW_ANONYMOUS=1")
	}
	f := pki.CertFiles(c.tlsDir, pki.RoleCLI)
	return append(env, "STRATA_CACERT="+f.CA, "STRATA_CLIENT_CERT="+f.Cert, "STRATA_CLIENT_KEY="+f.Key)
}

// daemonEnv is the environment of `strata <command>`: a server or an
// agent gets its role's certificate; dev makes its own.
func (c *cell) daemonEnv(command string) []string {
	env := c.credentialEnv()
	role := map[string]pki.Role{"server": pki.RoleServer, "agent": pki.RoleAgent}[command]
	if c.plaintext || role == "" {
		return env
	}
	if c.anonymous && role == pki.RoleServer {
		env = append(env, "STRATA_INSECURE_ALLOW_ANONYMOUS=1")
	}
	f := pki.CertFiles(c.tlsDir, role)
	return append(env, "STRATA_TLS_CA="+f.CA, "STRATA_TLS_CERT="+f.Cert, "STRATA_TLS_KEY="+f.Key)
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func newCell(t *testing.T, ttl time.Duration) *cell {
	t.Helper()
	return newCellOf(t, &cell{t: t, dir: t.TempDir(), ttl: ttl, agents: map[string]*proc{}})
}

// newAnonymousCell is newCell whose server lets callers without a client
// certificate use the API (--insecure-allow-anonymous): a browser's UI,
// which presents none.
func newAnonymousCell(t *testing.T, ttl time.Duration) *cell {
	t.Helper()
	return newCellOf(t, &cell{t: t, dir: t.TempDir(), ttl: ttl, agents: map[string]*proc{}, anonymous: true})
}

func newCellOf(t *testing.T, c *cell) *cell {
	t.Helper()
	c.tlsDir = newTLSDir(t, c.dir)
	c.httpAddr = freeAddr(t)
	c.addr = c.url(c.httpAddr)
	c.startServer()
	t.Cleanup(c.shutdown)
	return c
}

func (c *cell) spawn(args ...string) *proc {
	c.t.Helper()
	p := &proc{log: &syncBuffer{}, args: args}
	bin := strataBin
	if c.bin != "" {
		bin = c.bin
	}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env = c.daemonEnv(args[0])
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		c.t.Fatalf("start strata %v: %v", args, err)
	}
	return p
}

func (c *cell) startServer() {
	c.t.Helper()
	c.server = c.spawn("server", "--data-dir", filepath.Join(c.dir, "server"), "--http-addr", c.httpAddr,
		"--heartbeat-ttl", c.ttl.String())
	c.eventually(20*time.Second, "server answers", func() error {
		_, _, err := c.client().Nodes(context.Background(), nil)
		return err
	})
}

// startAgent starts an agent named name with its own data dir.
func (c *cell) startAgent(name string, extra ...string) {
	c.t.Helper()
	args := append([]string{"agent", "--servers", c.addr, "--data-dir", filepath.Join(c.dir, "agent-"+name),
		"--name", name, "--cpu-total", "2000", "--memory-total", "2GiB"}, extra...)
	c.agents[name] = c.spawn(args...)
	c.eventually(20*time.Second, "agent "+name+" registers", func() error {
		n := c.node(name)
		if n == nil || n.Status != api.NodeReady {
			return fmt.Errorf("node %s not ready yet", name)
		}
		return nil
	})
}

// kill SIGKILLs a daemon and waits for it.
func (c *cell) kill(p *proc) {
	if p == nil || p.cmd.Process == nil {
		return
	}
	p.cmd.Process.Signal(syscall.SIGKILL)
	p.cmd.Wait()
}

func (c *cell) shutdown() {
	// Stop every workload so tasks and cgroups go away, then the daemons.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cl := c.newClient(c.addr)
	if list, _, err := cl.Workloads(ctx, nil); err == nil {
		for _, w := range list {
			cl.StopWorkload(ctx, w.Name, false)
		}
		for ctx.Err() == nil {
			allocs, _, err := cl.Allocations(ctx, "", nil)
			if err != nil || !anyLive(allocs) {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	for name, p := range c.agents {
		c.kill(p)
		killAgentTasks(filepath.Join(c.dir, "agent-"+name))
		removeAgentCgroupParent(filepath.Join(c.dir, "agent-"+name))
	}
	c.kill(c.server)
	for _, p := range c.servers {
		c.kill(p)
	}
	if c.t.Failed() {
		for i, p := range c.servers {
			c.t.Logf("server %d log:\n%s", i+1, p.log.String())
		}
	}
	if c.t.Failed() && c.server != nil {
		c.t.Logf("server log:\n%s", c.server.log.String())
		for name, p := range c.agents {
			c.t.Logf("agent %s log:\n%s", name, p.log.String())
		}
	}
}

func anyLive(allocs []*api.Allocation) bool {
	for _, a := range allocs {
		if a.ClientStatus == api.AllocRunning || a.ClientStatus == api.AllocPending && a.DesiredStatus == api.DesiredRun {
			return true
		}
	}
	return false
}

// strata runs a CLI command against the cell.
func (c *cell) strata(args ...string) (stdout, stderr string, code int) {
	c.t.Helper()
	cmd := exec.Command(strataBin, args...)
	cmd.Env = append(c.credentialEnv(), "STRATA_ADDR="+c.addr)
	cmd.Dir = repoRoot(c.t)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code = 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		c.t.Fatalf("strata %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

// mustStrata runs a CLI command and fails the test on a non-zero exit.
func (c *cell) mustStrata(args ...string) string {
	c.t.Helper()
	out, errOut, code := c.strata(args...)
	if code != 0 {
		c.t.Fatalf("strata %v: exit %d\nstdout: %s\nstderr: %s", args, code, out, errOut)
	}
	return out
}

func (c *cell) allocs(workload string) []*api.Allocation {
	c.t.Helper()
	var out []*api.Allocation
	if err := json.Unmarshal([]byte(c.mustStrata("allocs", workload, "-o", "json")), &out); err != nil {
		c.t.Fatalf("decode allocs: %v", err)
	}
	return out
}

func (c *cell) node(name string) *api.Node {
	nodes, _, err := c.client().Nodes(context.Background(), nil)
	if err != nil {
		return nil
	}
	for _, n := range nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// eventually polls cond until it returns nil or the deadline passes.
func (c *cell) eventually(d time.Duration, what string, cond func() error) {
	c.t.Helper()
	deadline := time.Now().Add(d)
	var err error
	for time.Now().Before(deadline) {
		if err = cond(); err == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.t.Fatalf("timed out after %v waiting for %s: %v", d, what, err)
}

// runningAllocs returns the workload's allocations that run.
func runningAllocs(allocs []*api.Allocation) []*api.Allocation {
	var out []*api.Allocation
	for _, a := range allocs {
		if a.ClientStatus == api.AllocRunning && a.DesiredStatus == api.DesiredRun {
			out = append(out, a)
		}
	}
	return out
}

func repoRoot(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test")
		}
		dir = parent
	}
}

// writeSpec writes a workload file into the cell's dir.
func (c *cell) writeSpec(name, body string) string {
	c.t.Helper()
	p := filepath.Join(c.dir, name+".yaml")
	if err := os.WriteFile(p, []byte(strings.TrimSpace(body)+"\n"), 0o644); err != nil {
		c.t.Fatal(err)
	}
	return p
}

func pidAlive(pid int) bool {
	return pid > 0 && syscall.Kill(pid, 0) == nil
}

// memoryLimitOf reads the memory limit of pid's cgroup (v1 or v2).
func memoryLimitOf(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		var file string
		switch {
		case strings.Contains(","+parts[1]+",", ",memory,"):
			file = filepath.Join("/sys/fs/cgroup/memory", parts[2], "memory.limit_in_bytes")
		case parts[0] == "0" && parts[1] == "":
			if _, err := os.Stat("/sys/fs/cgroup/memory"); err == nil {
				continue // hybrid: the v1 memory controller holds the limit
			}
			file = filepath.Join("/sys/fs/cgroup", parts[2], "memory.max")
		default:
			continue
		}
		v, err := os.ReadFile(file)
		if err != nil {
			t.Fatalf("read %s: %v", file, err)
		}
		var n int64
		fmt.Sscan(strings.TrimSpace(string(v)), &n)
		return n
	}
	t.Fatalf("pid %d has no memory cgroup: %s", pid, b)
	return 0
}
