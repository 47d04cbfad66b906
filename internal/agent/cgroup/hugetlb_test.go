package cgroup

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestV2HugetlbAndMemsOnFakeRoot checks the files a v2 group writes for
// huge pages and memory tiers: every page size the kernel offers gets a
// limit (0 for one not asked for), and Mems wins over NUMANode.
func TestV2HugetlbAndMemsOnFakeRoot(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "cgroup.controllers"), []byte("cpuset cpu memory pids hugetlb"), 0o644)
	rel := TaskPath("alloc1", "db")
	dir := filepath.Join(root, rel)
	os.MkdirAll(dir, 0o755)
	for _, f := range []string{"hugetlb.2MB.max", "hugetlb.1GB.max"} {
		os.WriteFile(filepath.Join(dir, f), []byte("max"), 0o644)
	}
	g, _ := Open(V2, root, rel)
	if err := g.Create(Limits{CPUs: []int{0, 1}, NUMANode: 0, Mems: []int{0, 2}, HugePages2Mi: 64 << 20}); err != nil {
		t.Fatalf("Create: %v", err)
	}
	for f, want := range map[string]string{
		"hugetlb.2MB.max": strconv.Itoa(64 << 20),
		"hugetlb.1GB.max": "0",
		"cpuset.mems":     "0,2",
		"cpuset.cpus":     "0-1",
	} {
		if got := readTrim(t, filepath.Join(dir, f)); got != want {
			t.Errorf("%s = %q, want %q", f, got, want)
		}
	}
	if got := HugetlbEnforced(V2, root); got != "cgroup2 hugetlb" {
		t.Errorf("HugetlbEnforced = %q", got)
	}
}

func TestHugePagesWithoutAController(t *testing.T) {
	root := t.TempDir()
	g, _ := Open(V2, root, TaskPath("a", "t"))
	err := g.Create(Limits{NUMANode: -1, HugePages2Mi: 2 << 20})
	if err == nil || !strings.Contains(err.Error(), "no hugetlb controller") {
		t.Errorf("Create = %v, want an error saying there is no hugetlb controller", err)
	}
	if err := g.Create(Limits{NUMANode: -1}); err != nil {
		t.Errorf("Create without huge pages = %v", err)
	}
	if got := HugetlbEnforced(V2, root); got != "" {
		t.Errorf("HugetlbEnforced = %q, want none", got)
	}
}

// TestHugetlbEnforcedOnThisHost runs a process in a real task group that
// may use one 2Mi page: touching one works, touching two kills it with
// SIGBUS. On a v1 host it goes through the hugetlb hierarchy, or, on a
// hybrid host like this project's (hugetlb bound to the cgroup2 mount),
// through /sys/fs/cgroup/unified. It reserves two pages in the kernel's
// pool for the test when there are fewer, and gives them back.
func TestHugetlbEnforcedOnThisHost(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	v, err := Detect(DefaultRoot)
	if err != nil {
		t.Skipf("needs cgroups: %v", err)
	}
	how := HugetlbEnforced(v, DefaultRoot)
	if how == "" {
		t.Skipf("no hugetlb controller under %s", DefaultRoot)
	}
	t.Logf("huge pages enforced by %s", how)
	reservePages(t, 2)

	g, _ := Open(v, DefaultRoot, TaskPath(fmt.Sprintf("hugetlb-test-%d", os.Getpid()), "t"))
	t.Cleanup(func() {
		g.Kill(time.Second)
		g.Remove()
	})
	if err := g.Create(Limits{NUMANode: -1, HugePages2Mi: 2 << 20}); err != nil {
		t.Fatalf("Create: %v", err)
	}
	touch := func(pages int) (string, error) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHugetlbTouchHelper$")
		cmd.Env = append(os.Environ(), "STRATA_HUGETLB_PAGES="+strconv.Itoa(pages),
			"STRATA_HUGETLB_PROCS="+strings.Join(g.ProcsFiles(), ":"))
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := touch(1); err != nil {
		t.Fatalf("one page within the limit: %v\n%s", err, out)
	}
	out, err := touch(2)
	if err == nil || !strings.Contains(out, "SIGBUS") {
		t.Fatalf("two pages over a one-page limit: err %v, want the process killed by SIGBUS\n%s", err, out)
	}
	if err := g.Kill(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	if err := g.Remove(); err != nil {
		t.Fatal(err)
	}
	for _, d := range g.Dirs() {
		if exists(d) {
			t.Errorf("%s left behind", d)
		}
	}
}

// reservePages makes the kernel's 2Mi pool hold at least n pages for the
// test and restores its size afterwards.
func reservePages(t *testing.T, n int) {
	const file = "/proc/sys/vm/nr_hugepages"
	data, err := os.ReadFile(file)
	if err != nil {
		t.Skipf("no huge pages: %v", err)
	}
	old, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	if old >= n {
		return
	}
	if err := os.WriteFile(file, []byte(strconv.Itoa(n)), 0o644); err != nil {
		t.Skipf("cannot reserve huge pages: %v", err)
	}
	t.Cleanup(func() { os.WriteFile(file, []byte(strconv.Itoa(old)), 0o644) })
	data, _ = os.ReadFile(file)
	if got, _ := strconv.Atoi(strings.TrimSpace(string(data))); got < n {
		t.Skipf("the kernel found only %d free huge pages", got)
	}
}

// TestHugetlbTouchHelper is the process TestHugetlbEnforcedOnThisHost
// runs: it joins the group, maps huge pages and writes to each.
func TestHugetlbTouchHelper(t *testing.T) {
	pages, _ := strconv.Atoi(os.Getenv("STRATA_HUGETLB_PAGES"))
	if pages == 0 {
		t.Skip("helper process only")
	}
	for _, f := range strings.Split(os.Getenv("STRATA_HUGETLB_PROCS"), ":") {
		if err := os.WriteFile(f, []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
			t.Fatalf("join %s: %v", f, err)
		}
	}
	mem, err := syscall.Mmap(-1, 0, pages<<21, syscall.PROT_READ|syscall.PROT_WRITE,
		syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS|0x40000 /* MAP_HUGETLB */)
	if err != nil {
		t.Fatalf("mmap %d huge pages: %v", pages, err)
	}
	for p := 0; p < pages; p++ {
		mem[p<<21] = 1 // a fault over the group's limit is a SIGBUS
	}
}
