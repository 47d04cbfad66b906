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
)

// unifiedRoot is where this host mounts cgroup v2: the root on a pure v2
// host, the "unified" mount on a hybrid one; "" when there is none.
func unifiedRoot() string {
	for _, root := range []string{DefaultRoot, filepath.Join(DefaultRoot, "unified")} {
		if exists(filepath.Join(root, "cgroup.procs")) && exists(filepath.Join(root, "cgroup.controllers")) {
			return root
		}
	}
	return ""
}

// opensIn starts sh in the cgroup whose procs file is procs, lets it try
// to open each path and returns, per path, "open" or the error text.
func opensIn(t *testing.T, procs []string, paths ...string) []string {
	t.Helper()
	script := `read go; for f in "$@"; do if (exec 3<"$f") 2>/dev/null; then echo open; else (exec 3<"$f") 2>&1 | tail -1; fi; done`
	cmd := exec.Command("sh", append([]string{"-c", script, "sh"}, paths...)...)
	stdin, _ := cmd.StdinPipe()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for _, f := range procs {
		if err := os.WriteFile(f, []byte(fmt.Sprint(cmd.Process.Pid)), 0o644); err != nil {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("join %s: %v", f, err)
		}
	}
	stdin.Write([]byte("go\n"))
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("wait: %v (%s)", err, out.String())
	}
	return strings.Split(strings.TrimSpace(out.String()), "\n")
}

// TestV2DeviceFilterDeniesOtherGPUs attaches the eBPF device filter to a
// cgroup of the unified hierarchy (a hybrid host has one too, without
// controllers: device programs need none) and checks that a process in
// it may open one fake GPU node (ENXIO: no driver) and not the other
// (EPERM).
func TestV2DeviceFilterDeniesOtherGPUs(t *testing.T) {
	root := unifiedRoot()
	if root == "" || os.Geteuid() != 0 {
		t.Skipf("needs root and a cgroup v2 hierarchy (unified root %q)", root)
	}
	nodes := fakeGPUNodes(t, 0, 1)
	denied, _, err := DeviceRuleOf(nodes[1])
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, fmt.Sprintf("strata-devtest-%d", time.Now().UnixNano()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(dir) })
	if err := attachDeviceFilter(dir, []DeviceRule{denied, {Type: 'b', Major: 7, Minor: 0}}); err != nil {
		t.Fatalf("attach: %v", err)
	}
	got := opensIn(t, []string{filepath.Join(dir, "cgroup.procs")}, nodes[0], nodes[1], "/dev/null")
	if len(got) != 3 || !strings.Contains(got[0], "No such device") || !strings.Contains(got[1], "Operation not permitted") || got[2] != "open" {
		t.Fatalf("opens = %q, want ENXIO for the given gpu, EPERM for the other, /dev/null open", got)
	}
}

func TestDeviceFilterProgram(t *testing.T) {
	prog := deviceFilterProgram([]DeviceRule{{Type: 'c', Major: 195, Minor: 1}, {Type: 'b', Major: 259, Minor: 3}})
	// 4 loads, 5 per rule, 2 to allow the rest
	if len(prog) != 4+2*5+2 {
		t.Fatalf("%d instructions", len(prog))
	}
	if r := prog[4+5]; r.code != opJneImm || r.imm != devTypeBlk {
		t.Fatalf("second rule starts with %+v, want a block-device type test", r)
	}
	if last := prog[len(prog)-2]; last.code != opMov64Imm || last.imm != 1 {
		t.Fatalf("the end allows: %+v", last)
	}
	if b := encodeInsns(prog[:1]); !bytes.Equal(b, []byte{0x61, 0x12, 0, 0, 0, 0, 0, 0}) {
		t.Fatalf("encoding % x", b)
	}
}
