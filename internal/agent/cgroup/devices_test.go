package cgroup

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// fakeGPUNodes makes character device nodes with NVIDIA's major (195) in
// a temp dir: with no driver behind them, opening one fails with ENXIO
// ("No such device or address") when the cgroup allows it and with EPERM
// when it denies it, which tells the two apart without a GPU.
func fakeGPUNodes(t *testing.T, minors ...uint32) []string {
	t.Helper()
	dir := t.TempDir()
	skipIfNoDev(t, dir)
	var paths []string
	for _, m := range minors {
		p := filepath.Join(dir, fmt.Sprintf("nvidia%d", m))
		if err := unix.Mknod(p, unix.S_IFCHR|0o666, int(unix.Mkdev(195, m))); err != nil {
			t.Skipf("mknod %s: %v (needs root and a file system without nodev)", p, err)
		}
		paths = append(paths, p)
	}
	return paths
}

func TestDeviceRuleOf(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mknod needs root")
	}
	nodes := fakeGPUNodes(t, 0, 7)
	r, ok, err := DeviceRuleOf(nodes[1])
	if err != nil || !ok || r.String() != "c 195:7 rwm" {
		t.Fatalf("DeviceRuleOf = %v %v %v, want c 195:7 rwm", r, ok, err)
	}
	if _, ok, err := DeviceRuleOf(filepath.Join(t.TempDir(), "gone")); ok || err != nil {
		t.Fatalf("missing node: ok %v err %v, want neither", ok, err)
	}
	plain := filepath.Join(t.TempDir(), "file")
	os.WriteFile(plain, nil, 0o644)
	if _, _, err := DeviceRuleOf(plain); err == nil {
		t.Fatal("a plain file made a rule")
	}
	rules, err := DeviceRulesOf([]string{nodes[0], nodes[0], nodes[1]})
	if err != nil || len(rules) != 2 {
		t.Fatalf("DeviceRulesOf = %v, %v; want two rules", rules, err)
	}
}

// TestV1DevicesDenyOtherGPUs puts a process in a task cgroup that denies
// one of two fake GPU nodes and checks that it may open the other only.
func TestV1DevicesDenyOtherGPUs(t *testing.T) {
	if v, err := Detect(DefaultRoot); err != nil || v != V1 || os.Geteuid() != 0 || !DeviceControl(V1, DefaultRoot) {
		t.Skipf("needs root on a cgroup v1 host with the devices controller (got %v, %v)", v, err)
	}
	nodes := fakeGPUNodes(t, 0, 1)
	denied, _, err := DeviceRuleOf(nodes[1])
	if err != nil {
		t.Fatal(err)
	}
	allocID := fmt.Sprintf("test-dev-%d", time.Now().UnixNano())
	g, _ := Open(V1, DefaultRoot, TaskPath(allocID, "t"))
	t.Cleanup(func() {
		g.Kill(time.Second)
		g.Remove()
	})
	if err := g.Create(Limits{DenyDevices: []DeviceRule{denied}, NUMANode: -1}); err != nil {
		t.Fatalf("Create: %v", err)
	}
	// The process waits on stdin until it is in the cgroup, then tries both.
	cmd := exec.Command("sh", "-c", `read go; for f in "$@"; do if (exec 3<"$f") 2>/dev/null; then echo open; else (exec 3<"$f") 2>&1 | tail -1; fi; done`, "sh", nodes[0], nodes[1])
	stdin, _ := cmd.StdinPipe()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for _, f := range g.ProcsFiles() {
		if err := os.WriteFile(f, []byte(fmt.Sprint(cmd.Process.Pid)), 0o644); err != nil {
			t.Fatalf("join %s: %v", f, err)
		}
	}
	stdin.Write([]byte("go\n"))
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("wait: %v (%s)", err, out.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("output %q, want two lines", out.String())
	}
	if !strings.Contains(lines[0], "No such device") {
		t.Errorf("assigned gpu: %q, want ENXIO (allowed, no driver)", lines[0])
	}
	if !strings.Contains(lines[1], "Operation not permitted") {
		t.Errorf("other gpu: %q, want EPERM (denied by the devices cgroup)", lines[1])
	}
}

// skipIfNoDev skips a test whose device nodes would sit on a nodev file
// system, where opening them fails whatever the cgroup says.
func skipIfNoDev(t *testing.T, dir string) {
	t.Helper()
	var fs unix.Statfs_t
	if err := unix.Statfs(dir, &fs); err == nil && fs.Flags&unix.ST_NODEV != 0 {
		t.Skipf("%s is on a nodev file system: device nodes there cannot be opened", dir)
	}
}
