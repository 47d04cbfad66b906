package cgroup

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func readTrim(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return strings.TrimSpace(string(data))
}

func TestFormatCPUList(t *testing.T) {
	for _, tc := range []struct {
		cpus []int
		want string
	}{
		{nil, ""},
		{[]int{0}, "0"},
		{[]int{0, 1, 2, 3}, "0-3"},
		{[]int{0, 2, 3, 4, 8}, "0,2-4,8"},
	} {
		if got := FormatCPUList(tc.cpus); got != tc.want {
			t.Errorf("FormatCPUList(%v) = %q, want %q", tc.cpus, got, tc.want)
		}
	}
}

func TestDetect(t *testing.T) {
	v2 := t.TempDir()
	os.WriteFile(filepath.Join(v2, "cgroup.controllers"), []byte("cpu memory pids"), 0o644)
	hybrid := t.TempDir()
	os.MkdirAll(filepath.Join(hybrid, "memory"), 0o755)
	os.WriteFile(filepath.Join(hybrid, "memory", "memory.limit_in_bytes"), []byte("9223372036854771712"), 0o644)
	os.MkdirAll(filepath.Join(hybrid, "unified"), 0o755)
	os.WriteFile(filepath.Join(hybrid, "unified", "cgroup.controllers"), []byte("hugetlb"), 0o644)

	for _, tc := range []struct {
		name    string
		root    string
		want    Version
		wantErr bool
	}{
		{"pure v2", v2, V2, false},
		{"hybrid is v1", hybrid, V1, false},
		{"empty", t.TempDir(), 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Detect(tc.root)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Fatalf("Detect = %v, %v; want %v, err=%v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestV2WritesLimitsToFakeRoot(t *testing.T) {
	root := t.TempDir()
	rel := TaskPath("alloc1", "web")
	// memory.swap.max exists on a kernel with swap accounting; the real
	// cgroupfs creates it on mkdir, the fake needs it beforehand.
	os.MkdirAll(filepath.Join(root, rel), 0o755)
	os.WriteFile(filepath.Join(root, rel, "memory.swap.max"), []byte("max"), 0o644)
	os.WriteFile(filepath.Join(root, rel, "memory.events"), []byte("low 0\nhigh 0\nmax 3\noom 1\noom_kill 2\n"), 0o644)

	g, err := Open(V2, root, rel)
	if err != nil {
		t.Fatal(err)
	}
	lim := Limits{CPUMilli: 1500, MemoryBytes: 64 << 20, PidsLimit: 50, CPUs: []int{2, 3}, NUMANode: 1}
	if err := g.Create(lim); err != nil {
		t.Fatalf("Create: %v", err)
	}
	dir := filepath.Join(root, rel)
	want := map[string]string{
		"cpu.max":          "150000 100000",
		"memory.max":       "67108864",
		"memory.swap.max":  "0",
		"memory.oom.group": "1",
		"pids.max":         "50",
		"cpuset.cpus":      "2-3",
		"cpuset.mems":      "1",
	}
	for f, v := range want {
		if got := readTrim(t, filepath.Join(dir, f)); got != v {
			t.Errorf("%s = %q, want %q", f, got, v)
		}
	}
	for _, anc := range []string{root, filepath.Join(root, "strata"), filepath.Join(root, "strata", "alloc1")} {
		if got := readTrim(t, filepath.Join(anc, "cgroup.subtree_control")); got != v2Controllers {
			t.Errorf("%s/cgroup.subtree_control = %q, want %q", anc, got, v2Controllers)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "cgroup.subtree_control")); err == nil {
		t.Errorf("leaf cgroup must not enable controllers for children")
	}
	if got := g.ProcsFiles(); !slices.Equal(got, []string{filepath.Join(dir, "cgroup.procs")}) {
		t.Errorf("ProcsFiles = %v", got)
	}
	if n, err := g.OOMKills(); err != nil || n != 2 {
		t.Errorf("OOMKills = %d, %v; want 2", n, err)
	}
	if n, err := g.MemoryLimit(); err != nil || n != 64<<20 {
		t.Errorf("MemoryLimit = %d, %v", n, err)
	}
	os.WriteFile(filepath.Join(dir, "cgroup.procs"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("0"), 0o644)
	if err := g.Kill(time.Second); err != nil {
		t.Errorf("Kill: %v", err)
	}
	if got := readTrim(t, filepath.Join(dir, "cgroup.kill")); got != "1" {
		t.Errorf("cgroup.kill = %q, want 1", got)
	}
	if err := g.Remove(); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "strata", "alloc1")); !os.IsNotExist(err) {
		t.Errorf("alloc cgroup dir still there: %v", err)
	}
}

func TestV2UnlimitedDefaults(t *testing.T) {
	root := t.TempDir()
	g, _ := Open(V2, root, TaskPath("a", "t"))
	if err := g.Create(Limits{NUMANode: -1}); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "strata", "a", "t")
	if got := readTrim(t, filepath.Join(dir, "cpu.max")); got != "max 100000" {
		t.Errorf("cpu.max = %q", got)
	}
	if got := readTrim(t, filepath.Join(dir, "pids.max")); got != "max" {
		t.Errorf("pids.max = %q", got)
	}
	for _, f := range []string{"memory.max", "cpuset.cpus", "cpuset.mems"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s written without a limit", f)
		}
	}
}

// TestV1Real creates a real cgroup on this host's v1 hierarchies, moves a
// process into it and checks limits, membership, kill and removal.
func TestV1Real(t *testing.T) {
	if v, err := Detect(DefaultRoot); err != nil || v != V1 || os.Geteuid() != 0 {
		t.Skipf("needs root on a cgroup v1 host (got %v, %v)", v, err)
	}
	allocID := fmt.Sprintf("test-%d", time.Now().UnixNano())
	g, _ := Open(V1, DefaultRoot, TaskPath(allocID, "t"))
	t.Cleanup(func() {
		g.Kill(time.Second)
		g.Remove()
	})
	if err := g.Create(Limits{CPUMilli: 250, MemoryBytes: 32 << 20, PidsLimit: 7, CPUs: []int{0}, NUMANode: 0}); err != nil {
		t.Fatalf("Create: %v", err)
	}
	checks := map[string]string{
		"cpu/cpu.cfs_quota_us":               "25000",
		"cpu/cpu.cfs_period_us":              "100000",
		"memory/memory.limit_in_bytes":       "33554432",
		"memory/memory.memsw.limit_in_bytes": "33554432",
		"pids/pids.max":                      "7",
		"cpuset/cpuset.cpus":                 "0",
		"cpuset/cpuset.mems":                 "0",
	}
	for f, want := range checks {
		ctrl, file, _ := strings.Cut(f, "/")
		path := filepath.Join(DefaultRoot, ctrl, "strata", allocID, "t", file)
		if !exists(path) {
			continue // e.g. memsw without swap accounting
		}
		if got := readTrim(t, path); got != want {
			t.Errorf("%s = %q, want %q", f, got, want)
		}
	}
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go cmd.Wait()
	for _, f := range g.ProcsFiles() {
		if err := os.WriteFile(f, []byte(fmt.Sprint(cmd.Process.Pid)), 0o644); err != nil {
			t.Fatalf("join %s: %v", f, err)
		}
	}
	pids, err := g.Procs()
	if err != nil || !slices.Equal(pids, []int{cmd.Process.Pid}) {
		t.Fatalf("Procs = %v, %v; want [%d]", pids, err, cmd.Process.Pid)
	}
	if err := g.Kill(5 * time.Second); err != nil {
		t.Fatalf("Kill: %v", err)
	}
	if err := g.Remove(); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	for _, c := range v1Controllers {
		if dir := filepath.Join(DefaultRoot, c, "strata", allocID); exists(dir) {
			t.Errorf("%s still exists", dir)
		}
	}
}
