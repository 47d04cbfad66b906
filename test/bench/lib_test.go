package bench_test

import (
	"bytes"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// count_node_downs counts the servers' "node down" lines and not the
// heartbeat guard's "deferring node downs" warnings, in the log format
// the servers write (slog's text handler, as strata server logs).
func TestCountNodeDownsCountsOnlyNodesMarkedDown(t *testing.T) {
	var log bytes.Buffer
	l := slog.New(slog.NewTextHandler(&log, nil))
	l.Warn("node down", "node", "sim-000001", "name", "sim-000001", "reason", "missed heartbeats", "evals", 1)
	l.Warn("heartbeat guard: this leader is starved; deferring node downs", "handled", 10, "expected", 500)
	l.Warn("node down", "node", "sim-000002", "name", "sim-000002", "reason", "missed heartbeats", "evals", 0)
	dir := t.TempDir()
	file := filepath.Join(dir, "s1.log")
	if err := os.WriteFile(file, log.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "s2.log")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		files []string
		want  string
	}{{[]string{file}, "2"}, {[]string{empty}, "0"}, {[]string{file, empty}, "2"}} {
		cmd := exec.Command("bash", append([]string{"-c", `. ./lib.sh && count_node_downs "$@"`, "count"}, tc.files...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("count_node_downs %v: %v\n%s", tc.files, err, out)
		}
		if got := strings.TrimSpace(string(out)); got != tc.want {
			t.Fatalf("count_node_downs %v = %s, want %s", tc.files, got, tc.want)
		}
	}
}
