// Package driverstest holds what the task drivers' tests share: the check
// that a closed driver leaves no goroutine behind.
package driverstest

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

// NoGoroutinesLeft waits up to timeout for the process's goroutines to be
// back at baseline (runtime.NumGoroutine before the driver was made) and
// fails with the stacks of the ones left when they are not.
func NoGoroutinesLeft(t testing.TB, baseline int, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for runtime.NumGoroutine() > baseline {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			n := runtime.Stack(buf, true)
			t.Fatalf("%d goroutines after the driver closed, %d before it was made:\n%s",
				runtime.NumGoroutine(), baseline, strings.TrimSpace(string(buf[:n])))
		}
		time.Sleep(10 * time.Millisecond)
	}
}
