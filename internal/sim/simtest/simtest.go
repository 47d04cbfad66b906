// Package simtest holds helpers shared by the simulator's tests: finding the
// read-only trace directory of the checkout. It is imported only by tests.
package simtest

import (
	"os"
	"path/filepath"
	"testing"
)

// TracesDir walks up from the test's working directory to the first
// "shared/traces" and returns it, or skips the test when there is none (a
// checkout without the shared traces).
func TracesDir(tb testing.TB) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatalf("getwd: %v", err)
	}
	for {
		for _, cand := range []string{filepath.Join(dir, "shared", "traces"), filepath.Join(dir, "..", "shared", "traces")} {
			if st, err := os.Stat(cand); err == nil && st.IsDir() {
				return filepath.Clean(cand)
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Skip("shared/traces not found above the working directory; skipping trace-backed test")
			return ""
		}
		dir = parent
	}
}

// Openb returns the path of a file in shared/traces/openb, skipping the test
// when it is absent.
func Openb(tb testing.TB, file string) string {
	tb.Helper()
	return traceFile(tb, "openb", file)
}

// GenAI returns the path of a file in shared/traces/genai, skipping the
// test when it is absent.
func GenAI(tb testing.TB, file string) string {
	tb.Helper()
	return traceFile(tb, "genai", file)
}

func traceFile(tb testing.TB, dir, file string) string {
	tb.Helper()
	p := filepath.Join(TracesDir(tb), dir, file)
	if _, err := os.Stat(p); err != nil {
		tb.Skipf("trace file %s not present: %v", p, err)
	}
	return p
}
