package server

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
)

// scrape returns every sample of /metrics as "name{labels}" → value.
func scrape(t *testing.T, s *Server) map[string]float64 {
	t.Helper()
	resp, err := http.Get(s.Addr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET /metrics: %s: %s", resp.Status, body)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("bad sample line %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	return out
}

// heartbeat sends one heartbeat as node, with the node's credentials.
func heartbeat(t *testing.T, s *Server, node string) {
	t.Helper()
	url := s.Addr() + "/v1/agent/nodes/" + node + "/heartbeat"
	req, _ := http.NewRequest(http.MethodPut, url, nil)
	req.Header.Set(api.HeaderNodeID, node)
	req.Header.Set(api.HeaderNodeSecret, testNodeSecret(node))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT %s: %s", url, resp.Status)
	}
}

// The server serves its metrics, and they move with what the server does.
func TestMetricsEndpointCountsWhatTheServerDoes(t *testing.T) {
	s := quietServer(t)
	registerNodes(t, s, 2)
	before := scrape(t, s)
	node := s.State().Snapshot().Nodes()[0].ID
	heartbeat(t, s, node)
	heartbeat(t, s, node)
	submit(t, s, fmt.Sprintf(benchWorkload, "w", 3))
	waitPlaced(t, s, "w", 3)

	grew := []string{
		"strata_heartbeats_total",
		"strata_raft_commit_seconds_count",
		"strata_raft_applied_index",
		"strata_scheduler_eval_seconds_count",
		"strata_broker_eval_wait_seconds_count",
		"strata_plan_apply_seconds_count",
		`strata_plans_total{outcome="committed"}`,
		"strata_scheduler_placements_total",
		`strata_scheduler_node_rejections_total{filter="require"}`, // benchWorkload refuses rack r0
		`strata_http_request_seconds_count{code="2xx",route="POST /v1/workloads"}`,
		`strata_http_request_seconds_count{code="2xx",route="PUT /v1/agent/nodes/{id}/heartbeat"}`,
	}
	// The placements are visible before the worker and the plan applier
	// have recorded their timings: scrape until every counter moved.
	var after map[string]float64
	waitFor(t, 10*time.Second, "every counter grows", func() error {
		after = scrape(t, s)
		for _, name := range grew {
			if after[name] <= before[name] {
				return fmt.Errorf("%s did not grow: %v then %v", name, before[name], after[name])
			}
		}
		return nil
	})
	if d := after["strata_heartbeats_total"] - before["strata_heartbeats_total"]; d != 2 {
		t.Errorf("strata_heartbeats_total grew by %v for 2 heartbeats", d)
	}
	if d := after["strata_scheduler_placements_total"] - before["strata_scheduler_placements_total"]; d != 3 {
		t.Errorf("strata_scheduler_placements_total grew by %v for 3 placements", d)
	}
	exact := map[string]float64{
		"strata_raft_is_leader":             1,
		`strata_nodes{status="ready"}`:      2,
		`strata_nodes{status="down"}`:       0,
		"strata_heartbeat_tracked_nodes":    1, // registerNodes proposes directly; only the heartbeating node is tracked
		"strata_heartbeat_interval_seconds": 1,
	}
	for name, want := range exact {
		if got, ok := after[name]; !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", name, got, ok, want)
		}
	}
	if after["strata_raft_leader_changes_total"] < 1 {
		t.Errorf("strata_raft_leader_changes_total = %v; the server became leader", after["strata_raft_leader_changes_total"])
	}
	if after["process_resident_memory_bytes"] <= 0 {
		t.Errorf("no process metrics")
	}
	// Copies that fit nowhere are counted.
	submit(t, s, strings.Replace(fmt.Sprintf(benchWorkload, "huge", 2), "cpu: 250m", "cpu: 64", 1))
	waitFor(t, 10*time.Second, "the unplaced copies counted", func() error {
		if got := scrape(t, s)["strata_scheduler_unplaced_total"] - after["strata_scheduler_unplaced_total"]; got != 2 {
			return fmt.Errorf("strata_scheduler_unplaced_total grew by %v, want 2", got)
		}
		return nil
	})
	for sample := range after {
		if strings.Contains(sample, node) {
			t.Errorf("a series is labelled with a raw path: %s", sample)
		}
	}
}

// Every strata_ metric the server exports is documented in docs/metrics.md,
// and every server metric documented there is exported.
func TestMetricsAreDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	section := ""
	for _, line := range strings.Split(string(doc), "\n") {
		if strings.HasPrefix(line, "## ") {
			section = line
		}
		if m := regexp.MustCompile("^\\| `(strata_[a-z_]+)`").FindStringSubmatch(line); m != nil && strings.Contains(section, "Server") {
			documented[m[1]] = true
		}
	}
	s := quietServer(t)
	exported := map[string]bool{}
	for sample := range scrape(t, s) {
		name := sample
		if i := strings.IndexByte(name, '{'); i >= 0 {
			name = name[:i]
		}
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			name = strings.TrimSuffix(name, suffix)
		}
		if strings.HasPrefix(name, "strata_") {
			exported[name] = true
		}
	}
	// Vectors without a sample yet are not scraped: add them by name.
	exported["strata_plans_total"] = true
	exported["strata_http_request_seconds"] = true
	exported["strata_scheduler_node_rejections_total"] = true
	for name := range exported {
		if !documented[name] {
			t.Errorf("%s is exported but not documented in docs/metrics.md", name)
		}
	}
	for name := range documented {
		if !exported[name] {
			t.Errorf("docs/metrics.md documents %s, which the server does not export", name)
		}
	}
}
