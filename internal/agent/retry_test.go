package agent

import (
	"testing"
	"time"
)

// TestRetryWaitsAreJittered: agents that lost their server together (a
// leader change, a network cut) must not come back in step: the waits of
// their retry loops are jittered, within the agent's bounds.
func TestRetryWaitsAreJittered(t *testing.T) {
	seen := map[time.Duration]bool{}
	for range 50 {
		d := retryBackoff(0)
		for range 3 {
			if d = retryBackoff(d); d < 100*time.Millisecond || d > 5*time.Second {
				t.Fatalf("wait %v outside 100ms..5s", d)
			}
		}
		seen[d] = true
	}
	if len(seen) < 10 {
		t.Fatalf("50 agents' fourth waits take %d values: they retry in step", len(seen))
	}
}
