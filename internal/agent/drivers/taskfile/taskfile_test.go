package taskfile

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestJSONRoundTripIsPrivate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spec.json")
	if ok, err := ReadJSON(path, new(map[string]int)); ok || err != nil {
		t.Fatalf("missing file: ok %v, err %v; want false, nil", ok, err)
	}
	// A stale temporary file with a wide mode must not widen the result.
	if err := os.WriteFile(path+".tmp", []byte("junk"), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(path, map[string]int{"a": 1}); err != nil {
		t.Fatal(err)
	}
	var got map[string]int
	if ok, err := ReadJSON(path, &got); !ok || err != nil || got["a"] != 1 {
		t.Fatalf("read back %v (ok %v, err %v)", got, ok, err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v (err %v), want 0600", fi.Mode().Perm(), err)
	}
	if err := os.WriteFile(path, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if ok, err := ReadJSON(path, &got); ok || err == nil {
		t.Fatalf("a corrupt file: ok %v, err %v; want an error", ok, err)
	}
}

func TestProcessIdentity(t *testing.T) {
	start, alive := ProcStart(os.Getpid())
	if !alive || start == 0 || !SameProcess(os.Getpid(), start) {
		t.Fatalf("this process: start %d alive %v", start, alive)
	}
	if SameProcess(os.Getpid(), start+1) {
		t.Fatal("a different start time matched: a reused pid would pass for the task")
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("cannot run true: %v", err)
	}
	if _, alive := ProcStart(cmd.Process.Pid); alive {
		t.Fatalf("pid %d of an exited and reaped process is alive", cmd.Process.Pid)
	}
	if _, alive := ProcStart(0); alive {
		t.Fatal("pid 0 is alive")
	}
}
