package spec

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/strata-dev/strata/api"
)

// Every shipped example must parse, and show what it exists to show.
func TestExamples(t *testing.T) {
	files, err := filepath.Glob("../../examples/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples found: %v", err)
	}
	checks := map[string]func(t *testing.T, w *api.Workload){
		"hello.yaml": func(t *testing.T, w *api.Workload) {
			task := w.Groups[0].Tasks[0]
			equal(t, "command", task.Command, []string{"/bin/sh", "-c", "while true; do echo hello from strata; sleep 2; done"})
			equal(t, "resources", task.Resources, api.Resources{CPUMilli: 100, MemoryBytes: 32 << 20})
		},
		"ml-inference.yaml": func(t *testing.T, w *api.Workload) {
			equal(t, "original policy", w.SchedulingPolicy.Original, "PredictiveMLOptimized")
		},
		"web.yaml": func(t *testing.T, w *api.Workload) {
			g := w.Groups[0]
			equal(t, "replicas and policy", []any{g.Replicas, w.SchedulingPolicy.Type}, []any{3, api.PolicySpread})
			if len(g.Placement.Require) == 0 || len(g.Placement.Prefer) == 0 {
				t.Errorf("web should carry require and prefer rules: %+v", g.Placement)
			}
		},
		"crashy.yaml": func(t *testing.T, w *api.Workload) {
			rp := w.Groups[0].RestartPolicy
			equal(t, "restart", []any{rp.Mode, rp.Attempts}, []any{api.RestartOnFailure, 2})
		},
		"pinned.yaml": func(t *testing.T, w *api.Workload) {
			equal(t, "exclusive cores", w.Groups[0].ExclusiveCores(), true)
		},
		"training.yaml": func(t *testing.T, w *api.Workload) {
			pl := w.Groups[0].Placement
			equal(t, "rules", []int{len(pl.Spread), len(pl.Affinity), len(pl.CommunicatesWith), len(pl.DataLocality)}, []int{1, 1, 2, 1})
			equal(t, "gang", w.Groups[0].Gang.Topology, "rack")
		},
		"packet-processor.yaml": func(t *testing.T, w *api.Workload) {
			task := w.Groups[0].Tasks[0]
			equal(t, "pinned, huge pages, tiers", []any{task.ExclusiveCores, task.Resources.HugePages2Mi, task.MemoryTiers},
				[]any{true, int64(64 << 20), []string{api.MemoryTierStandard, api.MemoryTierSlow}})
			equal(t, "cpu rules", len(w.Groups[0].Placement.Require), 2)
		},
		"devices.yaml": func(t *testing.T, w *api.Workload) {
			devs := w.Groups[0].Tasks[0].Devices
			equal(t, "device classes", []string{devs[0].Class, devs[1].Class}, []string{"fpga", "nic-vf"})
			equal(t, "numa local", devs[0].NUMALocal && devs[1].NUMALocal, true)
		},
		"gpu-share.yaml": func(t *testing.T, w *api.Workload) {
			task := w.Groups[0].Tasks[0]
			equal(t, "gpu share", []int64{task.Resources.GPUs, task.Resources.GPUMilli}, []int64{0, 500})
			equal(t, "models", task.GPUModels, []string{"A100", "H100"})
		},
	}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if name == "cell.yaml" {
				c, err := ParseCellConfig(data)
				if err != nil {
					t.Fatal(err)
				}
				equal(t, "windows", c.WindowNames(), []string{"peak-hours"})
				return
			}
			w := mustParse(t, string(data))
			if check, ok := checks[name]; ok {
				check(t, w)
			}
		})
	}
	for name := range checks {
		if _, err := os.Stat(filepath.Join("../../examples", name)); err != nil {
			t.Errorf("example %s is missing: %v", name, err)
		}
	}
}
