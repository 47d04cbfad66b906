package cgroup

import (
	"os"
	"path/filepath"
	"testing"
)

func TestReadUsage(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string // relative to the test root
		dirs  []string
		want  Usage
	}{
		{"v2", map[string]string{
			"strata/a/t/cpu.stat":       "usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\n",
			"strata/a/t/memory.current": "1048576\n",
		}, []string{"strata/a/t"}, Usage{CPUSeconds: 2.5, MemoryBytes: 1 << 20, HasCPU: true, HasMemory: true}},
		{"v1 with cpu and cpuacct apart: cpu.stat has no usage", map[string]string{
			"cpu/strata/a/t/cpu.stat":                 "nr_periods 10\nnr_throttled 2\nthrottled_time 5000\n",
			"cpuacct/strata/a/t/cpuacct.usage":        "3000000000\n",
			"memory/strata/a/t/memory.usage_in_bytes": "8192\n",
		}, []string{"cpu/strata/a/t", "cpuacct/strata/a/t", "memory/strata/a/t"},
			Usage{CPUSeconds: 3, MemoryBytes: 8192, HasCPU: true, HasMemory: true}},
		{"v1 with cpu and cpuacct co-mounted", map[string]string{
			"cpu/strata/a/t/cpuacct.usage":            "1500000000\n",
			"memory/strata/a/t/memory.usage_in_bytes": "4096\n",
			"pids/strata/a/t/pids.current":            "3\n",
		}, []string{"cpu/strata/a/t", "memory/strata/a/t", "pids/strata/a/t"},
			Usage{CPUSeconds: 1.5, MemoryBytes: 4096, HasCPU: true, HasMemory: true}},
		{"v1 without a memory controller", map[string]string{
			"cpu/strata/a/t/cpuacct.usage": "1000000000\n",
		}, []string{"cpu/strata/a/t"}, Usage{CPUSeconds: 1, HasCPU: true}},
		{"gone: the task ended", nil, []string{"strata/a/gone"}, Usage{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			for rel, body := range c.files {
				p := filepath.Join(root, rel)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var dirs []string
			for _, d := range c.dirs {
				dirs = append(dirs, filepath.Join(root, d))
			}
			got, err := ReadUsage(dirs)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Fatalf("ReadUsage = %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestReadUsageRefusesGarbage(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "memory.current"), []byte("lots\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadUsage([]string{dir}); err == nil {
		t.Fatal("ReadUsage accepted memory.current = lots")
	}
}
