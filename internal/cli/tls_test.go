package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/agent"
	"github.com/strata-dev/strata/internal/pki"
	"github.com/strata-dev/strata/internal/server"
	"github.com/strata-dev/strata/internal/server/servertest"
)

// TestTLSCellOfThreeServers: three servers with TLS form a cell over the
// mutual-TLS server port, forward writes through it, and an agent with an
// agent certificate registers; a plaintext client gets nothing.
func TestTLSCellOfThreeServers(t *testing.T) {
	t.Parallel()
	c := servertest.Start(t, 3, servertest.WithTLS(t))
	l := c.Leader()
	f := c.Follower(l)
	if _, err := c.ClientOf(c.Addr(f)).RegisterWorkload(context.Background(), []byte(strings.ReplaceAll(tinyDoc, "NAME", "via-follower"))); err != nil {
		t.Fatalf("a write through a follower over TLS: %v", err)
	}
	if _, _, err := api.NewClient("http://"+c.Configs[l].HTTPAddr).Nodes(context.Background(), nil); err == nil {
		t.Fatal("a plaintext request to a TLS server was answered")
	}
	if _, _, err := api.NewClient(c.Addr(l)).Nodes(context.Background(), nil); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("a client that does not trust the cell's CA: %v, want a certificate error", err)
	}
}

const tinyDoc = `
apiVersion: strata.dev/v1
kind: Workload
metadata: {name: NAME}
spec:
  groups:
    - name: g
      tasks:
        - {name: t, driver: mock, command: ["x"], resources: {cpu: 100m, memory: 64Mi}}
`

// TestDevTLSCell is what strata dev sets up, in process: the cell's own
// CA and certificates under ./strata-data/tls, a TLS server, an agent that
// registers over mutual TLS, and the CLI, run from the same directory,
// that finds the credentials by itself: nodes, run, and logs fetched from
// the agent over mutual TLS.
func TestDevTLSCell(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "hello.yaml")
	os.WriteFile(spec, []byte(strings.ReplaceAll(tinyDoc, "NAME", "hello")), 0o644)
	t.Chdir(dir)
	tlsDir := devTLSDir(devDataDir)
	if err := pki.EnsureDev(tlsDir); err != nil {
		t.Fatal(err)
	}
	srvFiles := pki.CertFiles(tlsDir, pki.RoleServer)
	hostport := servertest.FreeAddr(t)
	srv, err := server.New(server.Config{DataDir: filepath.Join(dir, "server"), HTTPAddr: hostport, TLS: &srvFiles,
		HeartbeatTTL: time.Hour, Logger: servertest.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	if !strings.HasPrefix(srv.Addr(), "https://") {
		t.Fatalf("server address %s, want https", srv.Addr())
	}
	servertest.Eventually(t, 20*time.Second, "a join token", func() error {
		if srv.JoinToken() == "" {
			return fmt.Errorf("none yet")
		}
		return nil
	})

	// An agent with a CLI certificate is refused by the servers' TLS.
	cliFiles := pki.CertFiles(tlsDir, pki.RoleCLI)
	bad := agentFlags{name: "bad", cpuTotal: "2000", memoryTotal: "2GiB", httpAddr: "127.0.0.1:0", joinToken: srv.JoinToken(),
		tls: tlsFlags{ca: cliFiles.CA, cert: cliFiles.Cert, key: cliFiles.Key}}
	if _, err := bad.agentConfig(t.TempDir(), []string{srv.Addr()}, servertest.Logger()); err == nil || !strings.Contains(err.Error(), "wrong role") {
		t.Fatalf("an agent with a CLI certificate: %v, want a wrong-role error", err)
	}

	agentFiles := pki.CertFiles(tlsDir, pki.RoleAgent)
	af := agentFlags{name: "n1", cpuTotal: "2000", memoryTotal: "2GiB", httpAddr: "127.0.0.1:0", joinToken: srv.JoinToken(),
		tls: tlsFlags{ca: agentFiles.CA, cert: agentFiles.Cert, key: agentFiles.Key}}
	cfg, err := af.agentConfig(filepath.Join(dir, "agent"), []string{srv.Addr()}, servertest.Logger())
	if err != nil {
		t.Fatal(err)
	}
	cfg.HeartbeatInterval, cfg.WatchWait = 100*time.Millisecond, 2*time.Second
	cfg.GPUCommand = []string{filepath.Join(dir, "no-nvidia-smi")}
	a, err := agent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); a.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	servertest.Eventually(t, 20*time.Second, "the agent registered over mutual TLS", func() error {
		out, errOut, code := runCLI("--addr", hostport, "nodes", "-o", "json")
		var nodes []api.Node
		if code != 0 || json.Unmarshal([]byte(out), &nodes) != nil || len(nodes) != 1 || !strings.HasPrefix(nodes[0].HTTPAddr, "https://") {
			return fmt.Errorf("exit %d %s %s", code, out, errOut)
		}
		return nil
	})
	if out, errOut, code := runCLI("--addr", hostport, "run", "-f", spec, "--wait", "--timeout", "60s"); code != 0 {
		t.Fatalf("run: exit %d %s %s", code, out, errOut)
	}
	out, _, code := runCLI("--addr", hostport, "allocs", "hello", "-o", "json")
	var allocs []api.Allocation
	if code != 0 || json.Unmarshal([]byte(out), &allocs) != nil || len(allocs) != 1 {
		t.Fatalf("allocs: %s", out)
	}
	// The server fetches the log from the agent over mutual TLS, signed:
	// the agent's answer is relayed (the mock task writes nothing).
	out, errOut, code := runCLI("--addr", hostport, "logs", allocs[0].ID)
	if code != 0 {
		t.Fatalf("logs: exit %d %s %s", code, out, errOut)
	}
	// The agent's log endpoint itself talks to servers only.
	resp, err := http.Get(strings.Replace(a.Node().HTTPAddr, "https://", "http://", 1) + "/v1/agent/allocations/" + allocs[0].ID + "/logs")
	if err == nil && resp.StatusCode == http.StatusOK {
		t.Fatal("the agent served logs over plaintext")
	}
	if resp != nil {
		resp.Body.Close()
	}
}

// TestScrapeCertificate: Prometheus, with a certificate made for scraping
// (strata tls cert create --scrape), reads an agent's per-task /metrics
// over mutual TLS and the servers' /metrics, but nothing else of the
// agent's; a CLI certificate gets no /metrics of an agent.
func TestScrapeCertificate(t *testing.T) {
	t.Parallel()
	c := servertest.Start(t, 1, servertest.WithTLS(t))
	c.WaitReady(0)
	tlsDir := filepath.Dir(c.Configs[0].TLS.CA)
	agentFiles := pki.CertFiles(tlsDir, pki.RoleAgent)
	af := agentFlags{name: "n1", cpuTotal: "2000", memoryTotal: "2GiB", httpAddr: "127.0.0.1:0", joinToken: c.JoinToken(),
		tls: tlsFlags{ca: agentFiles.CA, cert: agentFiles.Cert, key: agentFiles.Key}}
	cfg, err := af.agentConfig(t.TempDir(), c.Addrs(), servertest.Logger())
	if err != nil {
		t.Fatal(err)
	}
	runTestAgent(t, cfg)
	var agentAddr string
	servertest.Eventually(t, 20*time.Second, "the agent registered", func() error {
		nodes, _, err := c.Client().Nodes(context.Background(), nil)
		if err != nil || len(nodes) != 1 || !strings.HasPrefix(nodes[0].HTTPAddr, "https://") {
			return fmt.Errorf("nodes %v: %v", nodes, err)
		}
		agentAddr = nodes[0].HTTPAddr
		return nil
	})
	out, errOut, code := runCLI("tls", "cert", "create", "--scrape", "--ca-dir", tlsDir, "--dir", t.TempDir()+"/prom")
	if code != 0 {
		t.Fatalf("tls cert create --scrape: exit %d %s", code, errOut)
	}
	scrapeCert := strings.TrimPrefix(strings.Split(out, "\n")[0], "scrape certificate ")
	scrape := pki.Files{CA: agentFiles.CA, Cert: scrapeCert, Key: strings.TrimSuffix(scrapeCert, ".pem") + "-key.pem"}
	get := func(files pki.Files, url string) (int, string, error) {
		cfg, err := files.ClientConfig(pki.RoleAgent)
		if strings.HasPrefix(url, c.Addr(0)) {
			cfg, err = files.ClientConfig(pki.RoleServer)
		}
		if err != nil {
			return 0, "", err
		}
		resp, err := (&http.Client{Transport: &http.Transport{TLSClientConfig: cfg}, Timeout: 10 * time.Second}).Get(url)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), nil
	}
	if code, body, err := get(scrape, agentAddr+"/metrics"); err != nil || code != http.StatusOK || !strings.Contains(body, "strata_agent_allocations") {
		t.Fatalf("agent /metrics with a scrape certificate: %d %v %.200s", code, err, body)
	}
	if code, body, err := get(scrape, agentAddr+"/v1/agent/health"); err != nil || code != http.StatusForbidden {
		t.Fatalf("agent health with a scrape certificate: %d %v %.200s", code, err, body)
	}
	if code, _, err := get(scrape, c.Addr(0)+"/metrics"); err != nil || code != http.StatusOK {
		t.Fatalf("server /metrics with a scrape certificate: %d %v", code, err)
	}
	if _, _, err := get(pki.CertFiles(tlsDir, pki.RoleCLI), agentAddr+"/metrics"); err == nil {
		t.Fatal("a CLI certificate read an agent's /metrics")
	}
}

// TestServerAuthenticatesSomebodyByDefault reproduces issue 18's defect
// 11 at the command line: a server that would authenticate nobody —
// plaintext without ACLs — starts only when told so loudly; TLS without
// ACLs starts, its users then needing a client certificate (the
// certificate matrix, internal/server); a dev cell stays convenient.
func TestServerAuthenticatesSomebodyByDefault(t *testing.T) {
	t.Setenv("STRATA_INSECURE_ALLOW_ANONYMOUS", "")
	dir := t.TempDir()
	if err := pki.EnsureDev(dir); err != nil {
		t.Fatal(err)
	}
	f := pki.CertFiles(dir, pki.RoleServer)
	withTLS := []string{"--tls-ca", f.CA, "--tls-cert", f.Cert, "--tls-key", f.Key}
	for _, tc := range []struct {
		name      string
		args      []string
		refused   bool
		anonymous bool
	}{
		{"plaintext without ACLs", []string{"--insecure-plaintext"}, true, false},
		{"plaintext without ACLs, anonymous on purpose", []string{"--insecure-plaintext", "--insecure-allow-anonymous"}, false, true},
		{"plaintext with ACLs", []string{"--insecure-plaintext", "--acl"}, false, false},
		{"TLS without ACLs: client certificates", withTLS, false, false},
		{"TLS without ACLs, anonymous on purpose", append(withTLS, "--insecure-allow-anonymous"), false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sf, err := serverFlagsFrom(tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := sf.config(nil)
			switch {
			case tc.refused && (err == nil || !strings.Contains(err.Error(), "--acl") || !strings.Contains(err.Error(), "--insecure-allow-anonymous")):
				t.Fatalf("%v: %v, want refused naming --acl and --insecure-allow-anonymous", tc.args, err)
			case !tc.refused && err != nil:
				t.Fatalf("%v: %v", tc.args, err)
			case cfg.AllowAnonymous != tc.anonymous:
				t.Fatalf("%v: anonymous %v, want %v", tc.args, cfg.AllowAnonymous, tc.anonymous)
			}
		})
	}
}
