package faultnet

import (
	"testing"
	"time"
)

// Await polls cond until it returns nil or timeout passes, and returns how
// long it took (for failover times) and cond's last error if it never
// held. It waits between polls with a short backoff (10 ms doubling to
// 100 ms); it never assumes how long anything takes.
func Await(timeout time.Duration, cond func() error) (time.Duration, error) {
	start := time.Now()
	deadline := start.Add(timeout)
	wait := 10 * time.Millisecond
	for {
		err := cond()
		if err == nil {
			return time.Since(start), nil
		}
		if !time.Now().Before(deadline) {
			return time.Since(start), err
		}
		timer := time.NewTimer(min(wait, time.Until(deadline)))
		<-timer.C
		wait = min(2*wait, 100*time.Millisecond)
	}
}

// Eventually is Await that fails the test, naming what it waited for and
// cond's last error, when cond does not hold within timeout.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() error) time.Duration {
	t.Helper()
	took, err := Await(timeout, cond)
	if err != nil {
		t.Fatalf("timed out after %v waiting for %s: %v", timeout, what, err)
	}
	return took
}
