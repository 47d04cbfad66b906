package exec

import (
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/strata-dev/strata/internal/agent/cgroup"
	"github.com/strata-dev/strata/internal/agent/drivers/taskfile"
)

// startProc starts a process this test reaps, so that a killed one does
// not linger as a zombie the checks would count as alive.
func startProc(t *testing.T, argv ...string) int {
	t.Helper()
	cmd := osexec.Command(argv[0], argv[1:]...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go cmd.Wait()
	t.Cleanup(func() { cmd.Process.Kill() })
	return cmd.Process.Pid
}

func alive(pid int) bool { _, ok := taskfile.ProcStart(pid); return ok }

// TestFindAndStopOrphans puts a task process into a task cgroup under the
// driver's parent, next to a shim-like process whose command line names its
// task dir, a cgroup the agent knows and an empty allocation cgroup, on
// the host's cgroup v1 hierarchies and on the v2 tree at
// /sys/fs/cgroup/unified. FindOrphans must report exactly the unknown ones
// and StopOrphan must end their processes and remove their directories,
// leaving the known one alone.
func TestFindAndStopOrphans(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for cgroups")
	}
	for _, tc := range []struct {
		name string
		root string
		want cgroup.Version
	}{
		{"v1", cgroup.DefaultRoot, cgroup.V1},
		{"v2", filepath.Join(cgroup.DefaultRoot, "unified"), cgroup.V2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if v, err := cgroup.Detect(tc.root); err != nil || v != tc.want {
				t.Skipf("no cgroup %s hierarchy at %s (%v, %v)", tc.name, tc.root, v, err)
			}
			parent := fmt.Sprintf("strata-test/orphans-%d", time.Now().UnixNano())
			d, err := New(Config{ShimCommand: []string{"/bin/false"}, CgroupRoot: tc.root, CgroupParent: parent})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			t.Cleanup(func() { removeTestParent(tc.root, parent) })
			allocsDir := filepath.Join(t.TempDir(), "allocs")
			mkGroup := func(alloc, task string) cgroup.Group {
				rel := cgroup.TaskRef{AllocID: alloc, Task: task}.Rel(parent)
				g, _ := cgroup.Open(tc.want, tc.root, rel)
				if tc.want == cgroup.V1 {
					if err := g.Create(cgroup.Limits{NUMANode: -1}); err != nil {
						t.Fatal(err)
					}
				} else if err := os.MkdirAll(filepath.Join(tc.root, rel), 0o755); err != nil {
					t.Fatal(err) // unified may have no controllers to enable; the tree is enough
				}
				t.Cleanup(func() { g.Kill(5 * time.Second); g.Remove() })
				return g
			}
			join := func(g cgroup.Group, pid int) {
				for _, f := range g.ProcsFiles() {
					if err := os.WriteFile(f, []byte(strconv.Itoa(pid)), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			orphanGroup := mkGroup("a1", "web")
			task := startProc(t, "sleep", "300")
			join(orphanGroup, task)
			// A shim's command line is `<strata> __shim <task dir>`; sh
			// stands in for it (and ignores nothing: it must be killed).
			shim := startProc(t, "sh", "-c", "sleep 300; true", "__shim", filepath.Join(allocsDir, "a1", "web"))
			knownGroup := mkGroup("a2", "db")
			knownTask := startProc(t, "sleep", "300")
			join(knownGroup, knownTask)
			if err := os.MkdirAll(filepath.Join(append([]string{tc.root}, cgroupDirs(tc.want, parent, "a3")...)...), 0o755); err != nil {
				t.Fatal(err)
			}

			orphans, err := d.FindOrphans(allocsDir, func(alloc, task string) bool { return alloc == "a2" })
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, o := range orphans {
				ids = append(ids, o.ID())
			}
			if !slices.Equal(ids, []string{"a1/web", "a3/"}) {
				t.Fatalf("orphans %v, want a1/web and the empty a3", ids)
			}
			web := orphans[0]
			if !web.ShimAlive || web.Handle.ShimPID != shim || !slices.Equal(web.PIDs, []int{task}) {
				t.Fatalf("orphan a1/web = %+v; want shim %d alive and task %d in its cgroup", web, shim, task)
			}
			for _, o := range orphans {
				if err := d.StopOrphan(o, 200*time.Millisecond); err != nil {
					t.Fatalf("StopOrphan %s: %v", o.ID(), err)
				}
			}
			deadline := time.Now().Add(5 * time.Second)
			for (alive(task) || alive(shim)) && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if alive(task) || alive(shim) {
				t.Errorf("after StopOrphan: task alive %v, shim alive %v", alive(task), alive(shim))
			}
			for _, dir := range append(orphanGroup.Dirs(), filepath.Join(append([]string{tc.root}, cgroupDirs(tc.want, parent, "a3")...)...)) {
				if _, err := os.Stat(dir); !os.IsNotExist(err) {
					t.Errorf("cgroup %s left behind (%v)", dir, err)
				}
			}
			if !alive(knownTask) {
				t.Errorf("the known task was killed")
			}
			for _, dir := range knownGroup.Dirs() {
				if _, err := os.Stat(dir); err != nil {
					t.Errorf("known cgroup %s: %v", dir, err)
				}
			}
		})
	}
}

// cgroupDirs is the path, below the root, of an allocation's cgroup in the
// first hierarchy a task joins (v1: memory).
func cgroupDirs(v cgroup.Version, parent, alloc string) []string {
	if v == cgroup.V1 {
		return []string{"memory", parent, alloc}
	}
	return []string{parent, alloc}
}

// removeTestParent removes the test's parent cgroups, and strata-test when
// nothing else uses it; it runs after every group inside is removed.
func removeTestParent(root, parent string) {
	bases := []string{root}
	for _, c := range []string{"cpu", "memory", "pids", "cpuset"} {
		bases = append(bases, filepath.Join(root, c))
	}
	for _, b := range bases {
		os.Remove(filepath.Join(b, parent))
		os.Remove(filepath.Join(b, filepath.Dir(parent)))
	}
}

// TestCloseRemovesAnEmptyOwnParent: a driver with its own cgroup parent
// removes it on Close when no task is left, and leaves it while one is.
func TestCloseRemovesAnEmptyOwnParent(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for cgroups")
	}
	v, err := cgroup.Detect(cgroup.DefaultRoot)
	if err != nil {
		t.Skipf("no cgroups: %v", err)
	}
	for _, busy := range []bool{false, true} {
		parent := fmt.Sprintf("strata-test/close-%d", time.Now().UnixNano())
		t.Cleanup(func() { removeTestParent(cgroup.DefaultRoot, parent) })
		d, err := New(Config{ShimCommand: []string{"/bin/false"}, CgroupParent: parent})
		if err != nil {
			t.Fatal(err)
		}
		g, _ := cgroup.Open(v, cgroup.DefaultRoot, cgroup.TaskRef{AllocID: "a", Task: "t"}.Rel(parent))
		if err := g.Create(cgroup.Limits{NUMANode: -1}); err != nil {
			t.Fatal(err)
		}
		if !busy {
			if err := g.Remove(); err != nil {
				t.Fatal(err)
			}
		}
		d.Close()
		own, _ := cgroup.Open(v, cgroup.DefaultRoot, parent)
		for _, dir := range own.Dirs() {
			_, err := os.Stat(dir)
			if busy && err != nil {
				t.Errorf("busy parent %s removed: %v", dir, err)
			}
			if !busy && !os.IsNotExist(err) {
				t.Errorf("empty parent %s left (%v)", dir, err)
			}
		}
		if busy {
			g.Remove()
		}
	}
}
