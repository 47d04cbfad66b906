// Package transcript runs data-driven tests in the style of etcd-raft's:
// a file of directives, each a command line followed by "----" and the
// output the code under test gives for it, up to a blank line:
//
//	# comments before a directive are kept
//	signal failed alloc=a1 node=n1 rack=r7
//	----
//
//	step 12:00:40
//	----
//	opened 20250105T120000-rack-r7: 12 allocations … : rack r7
//
// Run feeds each directive to the test's function and compares what it
// returns with the file; asked to rewrite (the test package's -rewrite
// flag) it writes the file anew instead, and the diff is reviewed like
// code. It is for tests only and must never be imported by production code.
package transcript

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Directive is one command of a transcript.
type Directive struct {
	// Cmd is the first word, Args the rest of the line, split on spaces.
	Cmd  string
	Args []string
	// Line is the command line as written.
	Line string
	// Pos is "file:line", for errors.
	Pos string

	comments []string
	want     string
}

// Arg returns the value of the argument key=value, and whether it is there.
func (d Directive) Arg(key string) (string, bool) {
	for _, a := range d.Args {
		if k, v, ok := strings.Cut(a, "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}

// RunDir runs every file matching pattern (e.g. "testdata/*.txt") as a
// subtest; each file gets a fresh state from newRun.
func RunDir(t *testing.T, pattern string, rewrite bool, newRun func(t *testing.T) func(d Directive) string) {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts match %s (%v)", pattern, err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) { Run(t, file, rewrite, newRun(t)) })
	}
}

// Run runs one transcript file through do; with rewrite it writes what do
// returned into the file instead of comparing.
func Run(t *testing.T, file string, rewrite bool, do func(d Directive) string) {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	ds := parse(t, file, string(raw))
	var sb strings.Builder
	for k, d := range ds {
		got := strings.TrimRight(do(d), "\n")
		if k > 0 {
			sb.WriteString("\n")
		}
		for _, c := range d.comments {
			sb.WriteString(c + "\n")
		}
		sb.WriteString(d.Line + "\n----\n")
		if got != "" {
			sb.WriteString(got + "\n")
		}
		if !rewrite && got != d.want {
			t.Errorf("%s: %s\n got:\n%s\nwant:\n%s", d.Pos, d.Line, got, d.want)
		}
	}
	if rewrite {
		if err := os.WriteFile(file, []byte(sb.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func parse(t *testing.T, file, text string) []Directive {
	t.Helper()
	var out []Directive
	var comments []string
	lines := strings.Split(text, "\n")
	for k := 0; k < len(lines); k++ {
		line := strings.TrimSpace(lines[k])
		if strings.HasPrefix(line, "#") {
			comments = append(comments, line)
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		d := Directive{Cmd: fields[0], Args: fields[1:], Line: line, Pos: file + ":" + strconv.Itoa(k+1), comments: comments}
		comments = nil
		if k+1 >= len(lines) || strings.TrimSpace(lines[k+1]) != "----" {
			t.Fatalf("%s: %q is not followed by ----", d.Pos, line)
		}
		k += 2
		var want []string
		for ; k < len(lines) && lines[k] != ""; k++ {
			want = append(want, lines[k])
		}
		d.want = strings.Join(want, "\n")
		out = append(out, d)
	}
	return out
}
