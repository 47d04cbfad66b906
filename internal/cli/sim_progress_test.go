package cli

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"
)

// TestQuietProgressSpeaksUpOnLongRuns: on a stderr that is not a terminal
// (a script, a CI log), a short simulation prints nothing, and a long one
// prints a plain line every few seconds, so that a 15-minute `sim --policy
// all` is not silent.
func TestQuietProgressSpeaksUpOnLongRuns(t *testing.T) {
	var out bytes.Buffer
	now := time.Unix(1000, 0)
	bar := newProgressBar(&out, showQuiet)
	bar.now = func() time.Time { return now }
	report := bar.func_("strata-binpack", "pods")
	report(1, 100)
	now = now.Add(quietFor - time.Second)
	report(10, 100)
	if out.Len() != 0 {
		t.Fatalf("a run shorter than %s printed %q", quietFor, out.String())
	}
	now = now.Add(2 * time.Second)
	report(20, 100)
	now = now.Add(time.Second)
	report(21, 100)
	now = now.Add(quietEvery)
	report(40, 100)
	report(100, 100)
	bar.done()
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("lines = %q, want one after %s, one %s later and the last", lines, quietFor, quietEvery)
	}
	for k, want := range []string{"strata-binpack: 20/100 pods (20.0%)", "strata-binpack: 40/100 pods (40.0%)", "strata-binpack: 100/100 pods (100.0%)"} {
		if !strings.HasPrefix(lines[k], want) {
			t.Fatalf("line %d = %q, want it to start %q", k, lines[k], want)
		}
	}
	if !strings.HasSuffix(lines[0], ", 6s") {
		t.Fatalf("line %q does not say how long the run has taken", lines[0])
	}

	// The next run of the same bar starts its own quiet time.
	out.Reset()
	report = bar.func_("strata-spread", "pods")
	report(1, 100)
	report(100, 100)
	bar.done()
	if out.Len() != 0 {
		t.Fatalf("a short second run printed %q", out.String())
	}
}

// TestAutoProgressOnAPipeIsQuiet: --progress auto on a stderr that is not
// a terminal is the quiet style, not nothing.
func TestAutoProgressOnAPipeIsQuiet(t *testing.T) {
	if isTerminal(os.Stderr) {
		t.Skip("stderr is a terminal")
	}
	show, err := progressStyle(&simFlags{progress: "auto"})
	if err != nil {
		t.Fatal(err)
	}
	if show != showQuiet {
		t.Fatalf("auto on a pipe = %v, want the quiet style", show)
	}
}
