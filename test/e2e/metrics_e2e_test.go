package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/internal/pki"
)

// The shipped observability, checked on a live cell of real processes:
// every metric a server and an agent export passes `promtool check
// metrics` (Prometheus's naming rules), and Debian's Prometheus, scraping
// the cell with deploy/prometheus's rules loaded, evaluates every rule and
// every expression of deploy/grafana's dashboards without an error, each
// naming only metrics the cell documents (docs/metrics.md) or the rules
// record.

// promTool returns the path of a Prometheus tool, or skips saying why
// (CI installs them: STRATA_REQUIRE_PROMETHEUS=1 makes a missing one fail).
func promTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("STRATA_REQUIRE_PROMETHEUS") == "1" {
			t.Fatalf("%s not found: apt-get install prometheus", name)
		}
		t.Skipf("%s not found (apt-get install prometheus)", name)
	}
	return p
}

// metricsCell is a server and an agent running one exec task.
func metricsCell(t *testing.T) (*cell, string) {
	c := newCell(t, 10*time.Second)
	agentAddr := freeAddr(t)
	c.startAgent("m1", "--agent-http-addr", agentAddr)
	c.mustStrata("run", "-f", c.writeSpec("busy", `
apiVersion: strata.dev/v1
kind: Workload
metadata: {name: busy}
spec:
  groups:
    - name: g
      tasks:
        - name: spin
          command: ["/bin/sh", "-c", "while true; do :; done"]
          resources: {cpu: 100m, memory: 32Mi}
`), "--wait", "--timeout", "60s")
	return c, c.url(agentAddr)
}

func TestMetricsPassPromtool(t *testing.T) {
	promtool := promTool(t, "promtool")
	c, agent := metricsCell(t)
	// The server's API trusts the CLI; an agent's serves servers only.
	for _, target := range []struct {
		who, url, must string
		client         *http.Client
	}{
		{"server", c.addr + "/metrics", "strata_scheduler_placements_total", c.httpClient(30 * time.Second)},
		{"agent", agent + "/metrics", "strata_task_cpu_allocated_cores", c.agentHTTPClient()},
	} {
		body := httpGetBody(t, target.client, target.url)
		if !strings.Contains(body, target.must) {
			t.Fatalf("the %s's metrics lack %s", target.who, target.must)
		}
		cmd := exec.Command(promtool, "check", "metrics")
		cmd.Stdin = strings.NewReader(body)
		out, err := cmd.CombinedOutput()
		if err != nil || len(bytes.TrimSpace(out)) > 0 {
			t.Errorf("promtool check metrics on the %s's /metrics: %v\n%s", target.who, err, out)
		}
	}
}

func TestPrometheusScrapesACell(t *testing.T) {
	prometheus := promTool(t, "prometheus")
	c, agent := metricsCell(t)
	root := repoRoot(t)
	dir := t.TempDir()
	rules, err := os.ReadFile(filepath.Join(root, "deploy/prometheus/strata.rules.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "strata.rules.yml"), rules, 0o644); err != nil {
		t.Fatal(err)
	}
	// A TLS cell, as deployed: Prometheus trusts the cell's CA, shows the
	// servers its scrape certificate (without ACLs the certificate is what
	// lets a caller in, and a scraper's reads /metrics) and the agents a
	// server certificate.
	srv, scrape := pki.CertFiles(c.tlsDir, pki.RoleServer), pki.CertFiles(c.tlsDir, pki.RoleScrape)
	config := fmt.Sprintf(`global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: [strata.rules.yml]
scrape_configs:
  - job_name: strata-server
    scheme: https
    tls_config: {ca_file: %q, cert_file: %q, key_file: %q}
    static_configs: [{targets: [%q]}]
  - job_name: strata-agent
    scheme: https
    tls_config: {ca_file: %q, cert_file: %q, key_file: %q}
    static_configs: [{targets: [%q]}]
`, scrape.CA, scrape.Cert, scrape.Key, strings.TrimPrefix(c.addr, "https://"), srv.CA, srv.Cert, srv.Key, strings.TrimPrefix(agent, "https://"))
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	promAddr := freeAddr(t)
	cmd := exec.Command(prometheus, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "tsdb"),
		"--web.listen-address="+promAddr)
	var log syncBuffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	query := func(expr string) (string, []json.RawMessage, error) {
		resp, err := http.Get("http://" + promAddr + "/api/v1/query?query=" + url.QueryEscape(expr))
		if err != nil {
			return "", nil, err
		}
		defer resp.Body.Close()
		var out struct {
			Status string `json:"status"`
			Error  string `json:"error"`
			Data   struct {
				Result []json.RawMessage `json:"result"`
			} `json:"data"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			return "", nil, err
		}
		if out.Status != "success" {
			return out.Status, nil, fmt.Errorf("%s", out.Error)
		}
		return out.Status, out.Data.Result, nil
	}
	// Both targets up, and the rules record allocated against used for the
	// running task.
	c.eventually(60*time.Second, "Prometheus scrapes both targets and records the rules", func() error {
		for _, expr := range []string{`up{job="strata-server"} == 1`, `up{job="strata-agent"} == 1`,
			`strata:workload_cpu_allocated:cores{workload="busy"}`, `strata:workload_cpu_used:cores{workload="busy"} > 0`, `strata:node_cpu_allocated:ratio > 0`} {
			if _, res, err := query(expr); err != nil || len(res) == 0 {
				return fmt.Errorf("%s: %d results, %v (prometheus log: %s)", expr, len(res), err, tail(log.String()))
			}
		}
		return nil
	})

	known := documentedMetrics(t, filepath.Join(root, "docs/metrics.md"))
	for _, m := range regexp.MustCompile(`(?m)record: (strata:[a-z0-9_:]+)`).FindAllStringSubmatch(string(rules), -1) {
		known[m[1]] = true
	}
	// Every dashboard expression parses and evaluates, naming only known
	// metrics.
	dashboards, _ := filepath.Glob(filepath.Join(root, "deploy/grafana/*.json"))
	if len(dashboards) < 3 {
		t.Fatalf("%d dashboards in deploy/grafana, want the control plane's, the scheduler's, and nodes and workloads'", len(dashboards))
	}
	names := regexp.MustCompile(`\bstrata[_:][a-z0-9_:]+`)
	for _, path := range dashboards {
		var d struct {
			Title  string `json:"title"`
			Panels []struct {
				Title   string `json:"title"`
				Targets []struct {
					Expr string `json:"expr"`
				} `json:"targets"`
			} `json:"panels"`
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, p := range d.Panels {
			for _, target := range p.Targets {
				if _, _, err := query(target.Expr); err != nil {
					t.Errorf("%s, panel %q: %s: %v", d.Title, p.Title, target.Expr, err)
				}
				for _, name := range names.FindAllString(target.Expr, -1) {
					name = strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_bucket"), "_count"), "_sum")
					if !known[name] {
						t.Errorf("%s, panel %q reads %s, which no server or agent exports (docs/metrics.md) and no rule records", d.Title, p.Title, name)
					}
				}
			}
		}
	}
}

// documentedMetrics are the metric names docs/metrics.md's tables list.
func documentedMetrics(t *testing.T, path string) map[string]bool {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `(strata_[a-z_]+)`").FindAllStringSubmatch(string(b), -1) {
		out[m[1]] = true
	}
	if len(out) < 20 {
		keys := make([]string, 0, len(out))
		for k := range out {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		t.Fatalf("docs/metrics.md lists only %v", keys)
	}
	return out
}

func httpGetBody(t *testing.T, client *http.Client, u string) string {
	t.Helper()
	resp, err := client.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %v", u, resp.Status, err)
	}
	return string(b)
}

func tail(s string) string {
	if len(s) > 800 {
		return s[len(s)-800:]
	}
	return s
}
