package criu

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseVersion(t *testing.T) {
	for _, tc := range []struct{ out, want string }{
		{"Version: 4.2\n", "4.2"},
		{"Version: 3.17.1\nGitID: v3.17.1\n", "3.17.1"},
		{"criu: unknown option\n", ""},
		{"", ""},
	} {
		if got := ParseVersion([]byte(tc.out)); got != tc.want {
			t.Errorf("ParseVersion(%q) = %q, want %q", tc.out, got, tc.want)
		}
	}
}

// count returns how often flag appears in args.
func count(args []string, flag string) int {
	n := 0
	for _, a := range args {
		if a == flag {
			n++
		}
	}
	return n
}

func TestRestoreArgs(t *testing.T) {
	for _, tc := range []struct {
		name         string
		stdio        Stdio
		leaveStopped bool
		inherit      []string
	}{
		{"two pipes", Stdio{Stdout: "pipe:[1]", Stderr: "pipe:[2]"}, true, []string{"fd[1]:pipe:[1]", "fd[2]:pipe:[2]"}},
		{"one pipe for both", Stdio{Stdout: "pipe:[1]", Stderr: "pipe:[1]"}, false, []string{"fd[1]:pipe:[1]"}},
		{"no pipes", Stdio{}, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := RestoreArgs("/usr/sbin/criu", "/img", tc.stdio, tc.leaveStopped)
			var inherit []string
			for i, a := range args {
				if a == "--inherit-fd" {
					inherit = append(inherit, args[i+1])
				}
			}
			if !slices.Equal(inherit, tc.inherit) {
				t.Errorf("--inherit-fd %v, want %v", inherit, tc.inherit)
			}
			if got := count(args, "--leave-stopped") == 1; got != tc.leaveStopped {
				t.Errorf("--leave-stopped %v, want %v", got, tc.leaveStopped)
			}
			for _, must := range []string{"restore", "--shell-job", "--restore-detached", "--manage-cgroups=ignore", "--pidfile"} {
				if count(args, must) != 1 {
					t.Errorf("args %v lack %s", args, must)
				}
			}
		})
	}
	if d := DumpArgs("/c", 42, "/img", true); count(d, "--leave-running") != 1 || !slices.Contains(d, "42") {
		t.Errorf("DumpArgs leaving running = %v", d)
	}
	if d := DumpArgs("/c", 42, "/img", false); count(d, "--leave-running") != 0 {
		t.Errorf("DumpArgs for a move leaves the task running: %v", d)
	}
}

// TestReadStdio reads fd 1 and 2 of a fake /proc: pipes are kept, anything
// else is not a pipe to replace.
func TestReadStdio(t *testing.T) {
	root := t.TempDir()
	fd := filepath.Join(root, "7", "fd")
	os.MkdirAll(fd, 0o755)
	os.Symlink("pipe:[123]", filepath.Join(fd, "1"))
	os.Symlink("/dev/null", filepath.Join(fd, "2"))
	got := ReadStdio(root, 7)
	if got != (Stdio{Stdout: "pipe:[123]"}) {
		t.Errorf("ReadStdio = %+v", got)
	}
	if got := ReadStdio(root, 8); got != (Stdio{}) {
		t.Errorf("ReadStdio of a missing pid = %+v", got)
	}
}

func TestProbeSaysWhy(t *testing.T) {
	info := Probe(context.Background(), "/does/not/exist/criu")
	if info.Available || !strings.Contains(info.Reason, "/does/not/exist/criu") {
		t.Errorf("Probe of a missing path = %+v", info)
	}
	dir := t.TempDir()
	if info := Probe(context.Background(), dir); info.Available || !strings.Contains(info.Reason, "not an executable") {
		t.Errorf("Probe of a directory = %+v", info)
	}
}

func TestErrorTail(t *testing.T) {
	dir := t.TempDir()
	log := "(00.1) fine\nError (a.c:1): first\n(00.2) x\nError (b.c:2): second\n"
	os.WriteFile(filepath.Join(dir, RestoreLog), []byte(log), 0o600)
	if got, want := ErrorTail(dir, RestoreLog), "Error (a.c:1): first; Error (b.c:2): second"; got != want {
		t.Errorf("ErrorTail = %q, want %q", got, want)
	}
	log = "Error (a.c:1): cause\nError (b.c:2): then\nError (c.c:3): and\nError (d.c:4): FAILED\n"
	os.WriteFile(filepath.Join(dir, DumpLog), []byte(log), 0o600)
	if got, want := ErrorTail(dir, DumpLog), "Error (a.c:1): cause; Error (b.c:2): then; …; Error (d.c:4): FAILED"; got != want {
		t.Errorf("ErrorTail of four errors = %q, want %q", got, want)
	}
	if got := ErrorTail(dir, "missing.log"); got != "" {
		t.Errorf("ErrorTail of a missing log = %q", got)
	}
}

// fakeCriu writes a criu that says it is 4.2 and whose `check` fails the
// first failures times (counted in a file), then passes.
func fakeCriu(t *testing.T, failures int) string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "criu")
	script := fmt.Sprintf(`#!/bin/sh
case "$1" in
--version) echo "Version: 4.2"; exit 0;;
check)
  n=$(cat %[1]s/count 2>/dev/null || echo 0); n=$((n+1)); echo $n > %[1]s/count
  if [ "$n" -le %[2]d ]; then echo "Error (criu/crtools.c:260): Could not initialize kernel features detection." >&2; exit 1; fi
  case "$2" in --feature) exit 1;; esac
  echo "Looks good."; exit 0;;
esac
exit 1
`, dir, failures)
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestProbeTriesACheckAgain: a `criu check` that fails once (seen on a
// busy machine) does not take checkpointing from the node; one that keeps
// failing does, with criu's reason.
func TestProbeTriesACheckAgain(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("Probe checks only as root")
	}
	if info := Probe(context.Background(), fakeCriu(t, 1)); !info.Available {
		t.Fatalf("a check that failed once: %+v, want available", info)
	}
	info := Probe(context.Background(), fakeCriu(t, checkAttempts))
	if info.Available || !strings.Contains(info.Reason, "Could not initialize kernel features detection") {
		t.Fatalf("a check that always fails: %+v, want unavailable with criu's reason", info)
	}
}
