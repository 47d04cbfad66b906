package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-dev/strata/internal/server/servertest"
)

// TestProgressWhenNotATerminal: where stderr is a pipe or a log, long
// commands still say how far they are, a line every few seconds
// ($STRATA_PROGRESS_EVERY here, to keep the test short).
func TestProgressWhenNotATerminal(t *testing.T) {
	t.Setenv("STRATA_PROGRESS_EVERY", "50ms")
	nodes := repoFile(t, "shared/traces/openb/openb_node_list_gpu_node.csv")
	pods := repoFile(t, "shared/traces/openb/openb_pod_list_default.csv")
	_, errOut, code := runCLI("sim", "--nodes", nodes, "--pods", pods, "--policy", "BestFit", "--seed", "42")
	if code != 0 || !strings.Contains(errOut, "BestFit: ") || !strings.Contains(errOut, "%)") {
		t.Fatalf("sim without a terminal: exit %d, stderr %q", code, errOut)
	}
	if _, errOut, _ := runCLI("sim", "--nodes", nodes, "--pods", pods, "--policy", "BestFit", "--seed", "42", "--no-progress"); errOut != "" {
		t.Fatalf("sim --no-progress wrote %q", errOut)
	}

	// A wait that cannot end (the workload's node has no agent to start
	// it) keeps saying what it waits for until its timeout.
	cell := servertest.Start(t, 1, nil)
	cell.WaitReady(0)
	registerNode(t, cell, "node-without-agent", "n1")
	c := cell.Addr(0)
	doc := filepath.Join(t.TempDir(), "w.yaml")
	os.WriteFile(doc, []byte(strings.ReplaceAll(tinyDoc, "NAME", "stuck")), 0o644)
	_, errOut, code = runCLI("--addr", c, "run", doc, "--wait", "--timeout", "1s")
	if code != 1 || strings.Count(errOut, `workload "stuck" version 1: `) < 3 || !strings.Contains(errOut, "(waited ") {
		t.Fatalf("run --wait without a terminal: exit %d, stderr %q", code, errOut)
	}
}
