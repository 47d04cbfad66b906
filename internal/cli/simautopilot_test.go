package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-dev/strata/internal/sim/scaling"
	"github.com/strata-dev/strata/internal/sim/sizing"
)

// writeUsage writes a usage file: pod "flat" at 0.5 and pod "grower" that
// steps from 0.3 to 0.45 halfway, 200 samples a minute each.
func writeUsage(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("value,timestamp_anon,container_ip\n")
	for i := 0; i < 200; i++ {
		grower := 0.3
		if i >= 100 {
			grower = 0.45
		}
		fmt.Fprintf(&b, "0.5,%d.0,flat\n%v,%d.0,grower\n", 60*i, grower, 60*i)
	}
	p := filepath.Join(t.TempDir(), "usage.csv")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSimVertical(t *testing.T) {
	usage := writeUsage(t)
	out, errOut, code := runCLI("sim", "vertical", "--usage", usage, "-o", "json", "--progress", "none")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rows []sizing.Row
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(rows) != 2 || rows[0].Policy != "strata" || rows[1].Policy != "baseline" || rows[0].Pods != 2 {
		t.Fatalf("rows %+v, want strata and baseline over 2 pods", rows)
	}
	// The step of 50 % breaches both once; Strata's limit on the flat pod
	// is tighter than 1.15 ×.
	if rows[1].PodsBreaching != 1 || rows[0].PodsBreaching != 1 || rows[0].Slack >= rows[1].Slack {
		t.Fatalf("rows %+v", rows)
	}
	plot := filepath.Join(t.TempDir(), "v.png")
	out, errOut, code = runCLI("sim", "vertical", "--usage", usage, "--explain", "--plot", plot, "--plot-pods", "grower")
	if code != 0 || !strings.Contains(out, "grower at 6000: usage 0.45 over limit") || !strings.Contains(out, "steady: peak 0.3") {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	if st, err := os.Stat(plot); err != nil || st.Size() == 0 {
		t.Fatalf("plot: %v", err)
	}
}

func TestSimAutopilotBadInput(t *testing.T) {
	usage := writeUsage(t)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no usage file", []string{"sim", "vertical"}, "--usage: the usage file is required"},
		{"bad split", []string{"sim", "vertical", "--usage", usage, "--split", "2/2"}, "--split: want K/N"},
		{"bounds contradict", []string{"sim", "vertical", "--usage", usage, "--min-allowed", "2", "--max-allowed", "1"}, "minAllowed: 2 is above maxAllowed 1"},
		{"no pod scored", []string{"sim", "vertical", "--usage", usage, "--split", "0/1000"}, "no pod with at least 120 samples"},
		{"min above max", []string{"sim", "horizontal", "--requests", usage, "--startup-latency", usage, "--min", "3", "--max", "2"}, "--min/--max"},
		{"no requests", []string{"sim", "horizontal"}, "--requests and --startup-latency are both required"},
		{"not a request trace", []string{"sim", "horizontal", "--requests", usage, "--startup-latency", usage}, "--requests: usage.csv:1:gmt_create: missing required column"},
		{"no duty file", []string{"sim", "gpu-share"}, "--duty, --nodes and --pods are all required"},
		{"bad output", []string{"sim", "vertical", "--usage", usage, "-o", "xml"}, "--output: unknown format"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, errOut, code := runCLI(c.args...)
			if code == 0 || !strings.Contains(errOut, c.want) {
				t.Fatalf("exit %d, stderr %q; want an error with %q", code, errOut, c.want)
			}
		})
	}
}

func TestSimHorizontal(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("gmt_create,predict_type,predict_status,exec_time_seconds\n")
	start := time.Date(2024, 11, 15, 10, 0, 0, 0, time.UTC)
	for d := 0; d < 3; d++ {
		for m := 0; m < 60; m += 2 {
			fmt.Fprintf(&b, "%s,TXT_2_IMG,SUCCEED,30.0\n", start.Add(time.Duration(d)*24*time.Hour+time.Duration(m)*time.Minute).Format("2006-01-02 15:04:05"))
		}
	}
	reqs := filepath.Join(dir, "r.csv")
	lat := filepath.Join(dir, "l.csv")
	os.WriteFile(reqs, []byte(b.String()), 0o644)
	os.WriteFile(lat, []byte("timestamp_anon,value,container_ip\n1,20000,a\n2,30000,b\n"), 0o644)
	out, errOut, code := runCLI("sim", "horizontal", "--requests", reqs, "--startup-latency", lat, "--max", "4", "-o", "json", "--progress", "none")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rows []scaling.Row
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(rows) != 2 || rows[0].Policy != "strata" || rows[1].Policy != "baseline" || rows[0].Requests != 90 || rows[0].ReplicaHours <= 0 {
		t.Fatalf("rows %+v", rows)
	}
	plot := filepath.Join(dir, "w.png")
	out, errOut, code = runCLI("sim", "horizontal", "--requests", reqs, "--startup-latency", lat, "--max", "4", "--score-from", "2024-11-17",
		"--plot", plot, "--progress", "none")
	if code != 0 || !strings.Contains(out, "scored from 2024-11-17 00:00") || !strings.Contains(out, "strata against the baseline") {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	if st, err := os.Stat(plot); err != nil || st.Size() == 0 {
		t.Fatalf("plot: %v", err)
	}
	if _, errOut, code := runCLI("sim", "horizontal", "--requests", reqs, "--startup-latency", lat, "--score-from", "yesterday"); code == 0 || !strings.Contains(errOut, `--score-from: want a UTC time like 2024-11-27`) {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}
