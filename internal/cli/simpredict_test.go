package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSimPredictBadInput(t *testing.T) {
	nodes := repoFile(t, "shared/traces/openb/openb_node_list_gpu_node.csv")
	pods := repoFile(t, "shared/traces/openb/openb_pod_list_default.csv")
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"failures without a training file", []string{"sim", "failures"}, "--train"},
		{"failures without a test file or a split", []string{"sim", "failures", "--train", "x.csv"}, "--test"},
		{"failures with a bad split", []string{"sim", "failures", "--train", repoFile(t, "shared/traces/failures/backblaze-2013-04-10..05-04.csv.gz"), "--split", "April", "--quiet"}, "--split"},
		{"failures on a missing file", []string{"sim", "failures", "--train", "/nonexistent.csv", "--split", "2013-04-25", "--quiet"}, "--train"},
		{"correlated without tickets", []string{"sim", "correlated"}, "--tickets"},
		{"correlated with a budget of the whole fleet", []string{"sim", "correlated", "--tickets", "x", "--budget", "1"}, "--budget"},
		{"churn with a rebalance period it cannot read", []string{"sim", "--mode", "churn", "--nodes", nodes, "--pods", pods, "--rebalance", "weekly"}, "--rebalance"},
		{"churn with no load", []string{"sim", "--mode", "churn", "--nodes", nodes, "--pods", pods, "--load", "0"}, "--load"},
		{"churn with a budget above all pods", []string{"sim", "--mode", "churn", "--nodes", nodes, "--pods", pods, "--migrate-per-day", "150"}, "--migrate-per-day"},
		{"an unknown mode names the three", []string{"sim", "--mode", "chaos", "--nodes", nodes, "--pods", pods}, "inflation, replay or churn"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errOut, code := runCLI(tc.args...)
			if code == 0 || !strings.Contains(errOut, tc.wantErr) {
				t.Fatalf("exit %d, stderr %q: want an error naming %s", code, errOut, tc.wantErr)
			}
		})
	}
}

// TestSimChurnRebalanced runs churn mode on a third of the openb cell for
// a day: three rows (the policy alone, rebalanced, the pooled bound) with
// the fields docs/rebalancing.md defines.
func TestSimChurnRebalanced(t *testing.T) {
	all := repoFile(t, "shared/traces/openb/openb_node_list_gpu_node.csv")
	pods := repoFile(t, "shared/traces/openb/openb_pod_list_default.csv")
	data, err := os.ReadFile(all)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	nodes := filepath.Join(t.TempDir(), "nodes.csv")
	if err := os.WriteFile(nodes, []byte(strings.Join(lines[:401], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI("sim", "--mode", "churn", "--nodes", nodes, "--pods", pods, "--policy", "FGD+",
		"--rebalance", "hourly", "--days", "1", "--warmup", "0.5", "--no-progress", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rows []struct {
		Policy                 string   `json:"policy"`
		Rebalance              string   `json:"rebalance"`
		GPUAlloc               float64  `json:"gpuAlloc"`
		MigratedPerDay         float64  `json:"migratedPerDay"`
		FragmentationRecovered *float64 `json:"fragmentationRecovered"`
	}
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 3 {
		t.Fatalf("decode %q: %v", out, err)
	}
	alone, with, bound := rows[0], rows[1], rows[2]
	if alone.Policy != "FGD+" || with.Rebalance != "1h0m0s" || with.FragmentationRecovered == nil || bound.Policy != "pooled-bound" {
		t.Fatalf("rows %+v", rows)
	}
	if !(bound.GPUAlloc >= with.GPUAlloc && with.GPUAlloc >= alone.GPUAlloc) || with.MigratedPerDay > 1.05 {
		t.Errorf("alone %.2f, rebalanced %.2f (%.2f%% moved a day), bound %.2f", alone.GPUAlloc, with.GPUAlloc, with.MigratedPerDay, bound.GPUAlloc)
	}
}
