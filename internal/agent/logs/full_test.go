package logs

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestWriterSurvivesAFullDisk is issue 18 defect 9: the shims copied a
// task's output with io.Copy into the log, which stopped at the first
// write error; the pipe closed and the task died of SIGPIPE. On a full
// file system the writer drops what it cannot write (the task's writes
// still succeed), looks again after a while, and once there is room says
// in the log how much it dropped and why.
func TestWriterSurvivesAFullDisk(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a small tmpfs")
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=256k"); err != nil {
		t.Skipf("mount tmpfs: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	ballast := filepath.Join(dir, "ballast")
	fillUp(t, ballast)

	now := time.Unix(1000, 0)
	w, err := NewWriter(dir, "stdout", 1<<20, 2)
	if err != nil {
		t.Fatal(err)
	}
	w.KeepFree(0)
	w.now = func() time.Time { return now }
	line := bytes.Repeat([]byte("x"), 4095)
	line = append(line, '\n')
	for i := range 64 {
		if n, err := w.Write(line); err != nil || n != len(line) {
			t.Fatalf("write %d on a full disk: %d, %v; want the whole line taken", i, n, err)
		}
	}
	if w.Dropped() == 0 {
		t.Fatal("nothing dropped on a full disk")
	}
	os.Remove(ballast)
	w.Write([]byte("before the retry\n")) // still dropping: the next look is later
	now = now.Add(retryFull + time.Millisecond)
	if _, err := w.Write([]byte("after\n")); err != nil {
		t.Fatal(err)
	}
	w.Close()
	got, _ := os.ReadFile(FileName(dir, "stdout"))
	if !strings.Contains(string(got), "[strata: dropped ") || !strings.Contains(string(got), "no space left on device") ||
		!strings.HasSuffix(string(got), "]\nafter\n") {
		t.Errorf("the log does not say what was dropped, then go on: ...%q", tail(got))
	}
}

// TestWriterKeepsTheReserve: the writer leaves the file system's last
// bytes (KeepFree) to what the node needs to go on (a restart's spec,
// exit files, the agent's database): below it, log lines are dropped, and
// counted, before the disk is full.
func TestWriterKeepsTheReserve(t *testing.T) {
	dir := t.TempDir()
	now := time.Unix(1000, 0)
	free := int64(1 << 30)
	w, err := NewWriter(dir, "stdout", 1<<20, 2)
	if err != nil {
		t.Fatal(err)
	}
	w.KeepFree(64 << 20)
	w.now = func() time.Time { return now }
	w.free = func() (int64, error) { return free, nil }
	w.Write([]byte("one\n"))
	free = 10 << 20 // below the reserve
	now = now.Add(retryFull + time.Millisecond)
	w.Write([]byte("two\n"))
	w.Write([]byte("three\n"))
	if got := w.Dropped(); got != int64(len("two\nthree\n")) {
		t.Errorf("dropped %d bytes, want %d", got, len("two\nthree\n"))
	}
	free = 1 << 30
	now = now.Add(retryFull + time.Millisecond)
	w.Write([]byte("four\n"))
	w.Close()
	got, _ := os.ReadFile(FileName(dir, "stdout"))
	want := "one\n[strata: dropped 10 bytes of this log: the file system has 10MiB free, below the 64MiB kept for the node]\nfour\n"
	if string(got) != want {
		t.Errorf("log %q, want %q", got, want)
	}
}

func fillUp(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			return
		}
	}
}

func tail(b []byte) []byte {
	if len(b) > 200 {
		return b[len(b)-200:]
	}
	return b
}
