package criu

import (
	"context"
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
	if got := ErrorTail(dir, "missing.log"); got != "" {
		t.Errorf("ErrorTail of a missing log = %q", got)
	}
}
