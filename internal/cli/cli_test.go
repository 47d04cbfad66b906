package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-dev/strata/internal/sim/trace"
)

func repoFile(t *testing.T, rel string) string {
	t.Helper()
	dir, _ := os.Getwd()
	for {
		p := filepath.Join(dir, rel)
		if _, err := os.Stat(p); err == nil {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skipf("%s not found above the test", rel)
		}
		dir = parent
	}
}

func runCLI(args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return out.String(), errb.String(), code
}

func TestValidate(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("apiVersion: strata.dev/v1\nkind: Workload\nmetadata: {name: x}\nspec:\n  groups:\n    - name: g\n      replicas: -1\n      tasks: [{name: t, command: [\"true\"]}]\n"), 0o644)
	cases := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  string
		wantErr  string
	}{
		{"good example", []string{"validate", "-f", repoFile(t, "examples/hello.yaml")}, 0, `workload "hello" is valid`, ""},
		{"seed example lists what is not enforced", []string{"validate", "-f", repoFile(t, "examples/ml-inference.yaml")}, 0, "not yet enforced", ""},
		{"bad field is named", []string{"validate", "-f", bad}, 1, "", "spec.groups[0].replicas"},
		{"missing file flag", []string{"validate"}, 1, "", "-f/--file is required"},
		{"the file as the argument", []string{"validate", repoFile(t, "examples/hello.yaml")}, 0, `workload "hello" is valid`, ""},
		{"the file twice", []string{"validate", "-f", bad, repoFile(t, "examples/hello.yaml")}, 1, "", "not both"},
		{"unknown output format", []string{"validate", "-f", bad, "-o", "xml"}, 1, "", "--output"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runCLI(tc.args...)
			if code != tc.wantCode || !strings.Contains(out, tc.wantOut) || !strings.Contains(errOut, tc.wantErr) {
				t.Fatalf("exit %d (want %d)\nstdout: %s\nstderr: %s", code, tc.wantCode, out, errOut)
			}
		})
	}
}

// TestWorkloadVariables: one file, several environments; a variable the
// file uses but nobody gave, and a --var the file does not use, are each
// refused with the name.
func TestWorkloadVariables(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "web.yaml")
	os.WriteFile(file, []byte("apiVersion: strata.dev/v1\nkind: Workload\nmetadata: {name: web-${var.env}}\nspec:\n  groups:\n"+
		"    - name: g\n      replicas: ${var.replicas}\n      tasks: [{name: t, command: [/bin/sh, -c, 'echo $HOME']}]\n"), 0o644)
	vars := filepath.Join(dir, "prod.vars.yaml")
	os.WriteFile(vars, []byte("env: prod\nreplicas: 5\nregion: eu\n"), 0o644)
	cases := []struct {
		name    string
		args    []string
		code    int
		wantOut string
		wantErr string
	}{
		{"from flags", []string{"--var", "env=staging", "--var", "replicas=2"}, 0, `"name": "web-staging"`, ""},
		{"from a file, a flag winning", []string{"--var-file", vars, "--var", "env=canary"}, 0, `"name": "web-canary"`, ""},
		{"undefined", []string{"--var", "env=dev"}, 1, "", "line 7: ${var.replicas} is not defined: give --var replicas=VALUE"},
		{"a --var the file does not use", []string{"--var", "env=dev", "--var", "replicas=1", "--var", "evn=x"}, 1, "", `--var evn: ` + file + ` has no ${var.evn} (did you mean "env"?)`},
		{"malformed --var", []string{"--var", "env"}, 1, "", "want NAME=VALUE"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runCLI(append([]string{"validate", file, "-o", "json"}, tc.args...)...)
			if code != tc.code || !strings.Contains(out, tc.wantOut) || !strings.Contains(errOut, tc.wantErr) {
				t.Fatalf("exit %d (want %d)\nstdout: %s\nstderr: %s", code, tc.code, out, errOut)
			}
		})
	}
	out, _, _ := runCLI("validate", file, "--var-file", vars, "-o", "json")
	if !strings.Contains(out, `"replicas": 5`) || !strings.Contains(out, "echo $HOME") {
		t.Fatalf("values from the file: %s", out)
	}
}

func TestValidateJSON(t *testing.T) {
	out, errOut, code := runCLI("validate", "-f", repoFile(t, "examples/hello.yaml"), "-o", "json")
	var w struct {
		Name   string `json:"name"`
		Groups []any  `json:"groups"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &w) != nil || w.Name != "hello" || len(w.Groups) != 1 {
		t.Fatalf("exit %d, %q, %s", code, out, errOut)
	}
}

func TestSimOnOpenb(t *testing.T) {
	nodes := repoFile(t, "shared/traces/openb/openb_node_list_gpu_node.csv")
	pods := repoFile(t, "shared/traces/openb/openb_pod_list_default.csv")
	dir := t.TempDir()
	out, errOut, code := runCLI("sim", "--nodes", nodes, "--pods", pods, "--policy", "BestFit", "--seed", "42",
		"--csv", filepath.Join(dir, "s.csv"), "--plot", filepath.Join(dir, "s.png"), "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rows []simRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 1 {
		t.Fatalf("decode %q: %v", out, err)
	}
	if r := rows[0]; r.Policy != "BestFit" || r.GPUAlloc < 85 || r.GPUAlloc > 100 {
		t.Fatalf("implausible result %+v", r)
	}
	for _, f := range []string{"s.csv", "s.png"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Fatalf("%s not written: %v", f, err)
		}
	}
	if _, errOut, code := runCLI("sim", "--nodes", nodes, "--pods", pods, "--mode", "sideways"); code != 1 || !strings.Contains(errOut, "--mode") {
		t.Fatalf("bad mode: exit %d %s", code, errOut)
	}
	// Strata's own policy by name, next to FGD, with each tie rule.
	for _, tie := range []string{"rank", "random", "first"} {
		out, errOut, code = runCLI("sim", "--nodes", nodes, "--pods", pods, "--policy", "FGD,FGD+", "--seed", "42",
			"--tie-break", tie, "-o", "json")
		if code != 0 {
			t.Fatalf("--tie-break %s: exit %d: %s", tie, code, errOut)
		}
		rows = nil
		if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 2 || rows[1].Policy != "FGD+" || rows[1].GPUAlloc < 90 {
			t.Fatalf("--tie-break %s: rows %+v (%v)", tie, rows, err)
		}
	}
	if _, errOut, code := runCLI("sim", "--nodes", nodes, "--pods", pods, "--tie-break", "sideways"); code == 0 || !strings.Contains(errOut, "tie-break") {
		t.Fatalf("bad tie-break: exit %d %s", code, errOut)
	}
}

func TestSimExplain(t *testing.T) {
	nodes := repoFile(t, "shared/traces/openb/openb_node_list_gpu_node.csv")
	pods := repoFile(t, "shared/traces/openb/openb_pod_list_default.csv")
	out, errOut, code := runCLI("sim", "--nodes", nodes, "--pods", pods, "--policy", "strata-binpack", "--seed", "42",
		"--explain", "openb-pod-0042", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rows []simRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 1 {
		t.Fatalf("decode %q: %v", out, err)
	}
	e := rows[0].Explanation
	if e == nil || e.Pod != "openb-pod-0042" || !e.Placed || e.Node == "" || e.Nodes != 1213 {
		t.Fatalf("explanation %+v", e)
	}
	rejected := 0
	for _, r := range e.Rejected {
		rejected += r.Nodes
	}
	if e.Feasible+rejected != e.Nodes || len(e.Components) == 0 || e.Components[0].Name != "binpack" {
		t.Fatalf("explanation does not add up or lacks the binpack component: %+v", e)
	}
	out, errOut, code = runCLI("sim", "--nodes", nodes, "--pods", pods, "--policy", "FGD", "--seed", "42",
		"--explain", "openb-pod-0042", "-o", "json")
	rows = nil
	if code != 0 || json.Unmarshal([]byte(out), &rows) != nil || len(rows) != 1 {
		t.Fatalf("FGD: exit %d %q %s", code, out, errOut)
	}
	if e := rows[0].Explanation; e == nil || len(e.Components) != 1 || e.Components[0].Name != "FGD" || e.Tied < 2 || len(e.RunnersUp) != 3 {
		t.Fatalf("FGD explanation %+v", e)
	}
	if _, errOut, code := runCLI("sim", "--nodes", nodes, "--pods", pods, "--policy", "BestFit", "--seed", "42",
		"--explain", "no-such-pod"); code != 1 || !strings.Contains(errOut, `no pod named "no-such-pod"`) {
		t.Fatalf("unknown pod: exit %d %s", code, errOut)
	}
}

// TestSimGoogleReplayReports: a Google replay reports pending-time
// percentiles, evictions by cause and allocation over time in every
// output: the text report, -o json, -o csv (the summary), --csv (the
// series, one row per point and run) and --plot.
func TestSimGoogleReplayReports(t *testing.T) {
	tasks := repoFile(t, "internal/sim/trace/testdata/task_events.csv")
	machines := repoFile(t, "internal/sim/trace/testdata/machines.csv")
	dir := t.TempDir()
	args := []string{"sim", "--format", "google", "--pods", tasks, "--machines-csv", machines, "--mode", "replay",
		"--policy", "BestFit,FGD", "--no-progress"}
	out, errOut, code := runCLI(append(args, "--csv", filepath.Join(dir, "series.csv"))...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"PENDING P50/P90/P99", "EVICTED MACHINE/RESIZED/TRACE", "in the trace itself", "over time", "RUNNING", "WAITING",
		"production (9-11)", "carried over"} {
		if !strings.Contains(out, want) {
			t.Errorf("text report lacks %q:\n%s", want, out)
		}
	}
	series, err := os.ReadFile(filepath.Join(dir, "series.csv"))
	if err != nil || !strings.HasPrefix(string(series), "policy,seed,time,") || !strings.Contains(string(series), "\nFGD,42,") {
		t.Fatalf("series csv (%v):\n%s", err, series)
	}

	out, errOut, code = runCLI(append(args, "-o", "json")...)
	var rows []simRow
	if code != 0 || json.Unmarshal([]byte(out), &rows) != nil || len(rows) != 2 {
		t.Fatalf("json: exit %d %s\n%s", code, errOut, out)
	}
	r := rows[0]
	if r.Pending == nil || r.Evictions == nil || r.TracePending == nil || len(r.Utilisation) == 0 || len(r.PendingByPriority) == 0 {
		t.Fatalf("json row lacks pending, evictions or utilisation: %+v", r)
	}
	// The fixture's 100-1 is evicted by the trace at 30 s while it runs.
	if r.Evictions.Trace != 1 || r.Evicted != 1 || r.CarriedOver != 2 || r.Updates != 1 {
		t.Fatalf("evictions %+v (total %d), carried over %d, updates %d", *r.Evictions, r.Evicted, r.CarriedOver, r.Updates)
	}

	out, errOut, code = runCLI(append(args, "-o", "csv")...)
	if code != 0 || !strings.HasPrefix(out, "policy,mode,seed,") || strings.Count(out, "\n") != 3 ||
		!strings.Contains(out, "pending_p99_s") || !strings.Contains(out, "evicted_trace") {
		t.Fatalf("csv: exit %d %s\n%s", code, errOut, out)
	}

	png := filepath.Join(dir, "replay.png")
	if _, errOut, code := runCLI("sim", "--format", "google", "--pods", tasks, "--machines-csv", machines, "--mode", "replay",
		"--policy", "FGD", "--plot", png, "--no-progress"); code != 0 {
		t.Fatalf("plot: exit %d %s", code, errOut)
	}
	if st, err := os.Stat(png); err != nil || st.Size() < 1000 {
		t.Fatalf("plot not written: %v", err)
	}
	if _, errOut, code := runCLI(append(args, "--plot", png)...); code != 1 || !strings.Contains(errOut, "--plot needs a single run") {
		t.Fatalf("plot of two runs: exit %d %s", code, errOut)
	}
	if _, errOut, code := runCLI(append(args, "--sample", "many")...); code != 1 || !strings.Contains(errOut, "--sample") {
		t.Fatalf("bad --sample: exit %d %s", code, errOut)
	}
}

// TestSimGrow builds a larger part from the fixture: copies shifted in
// time with their own job ids, cut at --events, the same bytes every time.
func TestSimGrow(t *testing.T) {
	tasks := repoFile(t, "internal/sim/trace/testdata/task_events.csv")
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.csv"), filepath.Join(dir, "b.csv.gz")
	if out, errOut, code := runCLI("sim", "grow", "--format", "google", "--copies", "3", "--shift", "10", "--events", "50", "-o", a, tasks); code != 0 || !strings.Contains(out, "wrote 50 events") {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
	data, _ := os.ReadFile(a)
	if n := strings.Count(string(data), "\n"); n != 50 || !strings.Contains(string(data), ",1000000000100,") || !strings.Contains(string(data), ",2000000000100,") {
		t.Fatalf("grown part: %d rows, copies' job ids missing:\n%s", n, data)
	}
	if _, errOut, code := runCLI("sim", "grow", "--copies", "3", "--shift", "10", "-o", b, tasks); code != 0 {
		t.Fatalf("gz: %s", errOut)
	}
	pods, err := trace.LoadGoogleTaskEvents(trace.DefaultGoogleScale, b)
	if err != nil || len(pods) != 3*7 {
		t.Fatalf("reading the grown part back: %d pods, %v", len(pods), err)
	}
	if _, errOut, code := runCLI("sim", "grow", "--copies", "0", "-o", a, tasks); code != 1 || !strings.Contains(errOut, "--copies") {
		t.Fatalf("bad copies: exit %d %s", code, errOut)
	}
}
