package cli

import (
	"context"
	"encoding/json"
	"fmt"
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
