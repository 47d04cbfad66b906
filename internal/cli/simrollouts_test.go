package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestSimRollouts(t *testing.T) {
	out, stderr, code := runCLI("sim", "rollouts", "--scenarios", "6", "--first-seed", "100001", "--workers", "2", "--runs", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var report struct {
		FirstSeed uint64 `json:"firstSeed"`
		Summary   struct {
			Runs     int `json:"runs"`
			Families []struct {
				Family string `json:"family"`
				Runs   int    `json:"runs"`
			} `json:"families"`
		} `json:"summary"`
		Runs []struct {
			Seed     uint64 `json:"seed"`
			Scenario string `json:"scenario"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &report); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if report.FirstSeed != 100001 || report.Summary.Runs != 6 || len(report.Runs) != 6 || report.Runs[5].Seed != 100006 {
		t.Fatalf("report %+v", report)
	}
	families := 0
	for _, f := range report.Summary.Families {
		families += f.Runs
	}
	if families != 6 {
		t.Fatalf("families count %d runs, want 6", families)
	}
}

func TestSimRolloutsBadInput(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--scenarios", "0"}, "--scenarios: must be at least 1, got 0"},
		{[]string{"--workers", "0"}, "--workers: must be at least 1"},
		{[]string{"--alpha", "1.5"}, "--alpha: must be in (0, 1), got 1.5"},
		{[]string{"-o", "csv"}, `--output: unknown format "csv" (want table, json or yaml)`},
		{[]string{"--progress", "loud"}, `--progress: unknown "loud"`},
	}
	for _, tt := range tests {
		_, stderr, code := runCLI(append([]string{"sim", "rollouts"}, tt.args...)...)
		if code == 0 || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want it to say %q", tt.args, code, stderr, tt.want)
		}
	}
}
