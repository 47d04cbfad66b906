package cgroup

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestSharedPool(t *testing.T) {
	for _, tc := range []struct {
		name        string
		all         []int
		reserved    [][]int
		want        []int
		wantStarved bool
	}{
		{"nothing reserved", []int{0, 1}, nil, []int{0, 1}, false},
		{"core 1 reserved", []int{0, 1}, [][]int{{1}}, []int{0}, false},
		{"two allocations", []int{0, 1, 2, 3}, [][]int{{1}, {3, 2}}, []int{0}, false},
		{"unknown core ignored", []int{0, 1}, [][]int{{7}}, []int{0, 1}, false},
		{"every core reserved keeps all", []int{0, 1}, [][]int{{0}, {1}}, []int{0, 1}, true},
		{"no cores", nil, nil, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, starved := SharedPool(tc.all, tc.reserved)
			if !slices.Equal(got, tc.want) || starved != tc.wantStarved {
				t.Errorf("SharedPool(%v, %v) = %v, %v; want %v, %v", tc.all, tc.reserved, got, starved, tc.want, tc.wantStarved)
			}
		})
	}
}

// TestSetCPUsFakeV2 checks the v2 layout on a fake tree: this host's
// unified mount has no cpuset controller (it is bound to v1), so the v2
// file is only reachable as a plain file here.
func TestSetCPUsFakeV2(t *testing.T) {
	root := t.TempDir()
	rel := filepath.Join(Parent, "a1", "web")
	os.MkdirAll(filepath.Join(root, rel), 0o755)
	os.WriteFile(filepath.Join(root, rel, "cpuset.cpus"), []byte("\n"), 0o644)
	changed, err := SetCPUs(V2, root, rel, []int{0, 2, 3})
	if err != nil || !changed {
		t.Fatalf("SetCPUs = %v, %v; want changed", changed, err)
	}
	if got := readTrim(t, filepath.Join(root, rel, "cpuset.cpus")); got != "0,2-3" {
		t.Errorf("cpuset.cpus = %q, want 0,2-3", got)
	}
	if changed, err := SetCPUs(V2, root, rel, []int{0, 2, 3}); err != nil || changed {
		t.Errorf("second SetCPUs = %v, %v; want unchanged", changed, err)
	}
	if changed, err := SetCPUs(V2, root, filepath.Join(Parent, "gone", "web"), []int{0}); err != nil || changed {
		t.Errorf("SetCPUs of a missing group = %v, %v; want nothing", changed, err)
	}
}

// TestSetCPUsRealV1 shrinks and restores a real v1 cpuset group's cores.
func TestSetCPUsRealV1(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	if v, err := Detect(DefaultRoot); err != nil || v != V1 || !exists(filepath.Join(DefaultRoot, "cpuset")) {
		t.Skip("needs the v1 cpuset hierarchy")
	}
	all, err := os.ReadFile(filepath.Join(DefaultRoot, "cpuset", "cpuset.cpus"))
	if err != nil {
		t.Fatal(err)
	}
	rel := TaskPath(fmt.Sprintf("cpuset-test-%d", os.Getpid()), "web")
	g, _ := Open(V1, DefaultRoot, rel)
	if err := g.Create(Limits{NUMANode: -1}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Remove() })
	file := filepath.Join(DefaultRoot, "cpuset", rel, "cpuset.cpus")
	if got, want := readTrim(t, file), string(all[:len(all)-1]); got != want {
		t.Fatalf("new group's cpuset = %q, want the root's %q", got, want)
	}
	if _, err := SetCPUs(V1, DefaultRoot, rel, []int{0}); err != nil {
		t.Fatal(err)
	}
	if got := readTrim(t, file); got != "0" {
		t.Errorf("cpuset.cpus = %q, want 0", got)
	}
}
