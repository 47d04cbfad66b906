// Package backoff is how long to wait before trying again, in one place:
// jittered waits for retry loops (a client's next round of servers, an
// agent's reconnect, a server forming its cell, an accept loop out of
// file descriptors), and the plain exponential growth of a policy's
// stated delays (a task's restart policy, a group's reschedule delay).
//
// Its waits are pure functions of their inputs and math/rand/v2: no
// clock, no state. Sleep waits one out, or until the caller's context
// ends.
package backoff

import (
	"context"
	"math/rand/v2"
	"time"
)

// Sleep waits d or until ctx is done; it reports whether ctx is still
// live.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// Policy bounds the waits of one retry loop.
type Policy struct {
	// Base is the shortest wait, and the first one's least.
	Base time.Duration
	// Max is the longest wait.
	Max time.Duration
}

// Next is the wait after prev (0 before the first): "decorrelated
// jitter", uniform in [Base, 3·max(prev, Base)] and within [Base, Max]. Waits grow
// about 1.5 to 2 times per retry, and callers that failed together spread
// out at once instead of retrying in step (a thundering herd on the
// server that just came back). A caller keeps the wait it got and passes
// it back; 0 starts over.
func (p Policy) Next(prev time.Duration) time.Duration {
	lo := max(p.Base, 1)
	prev = max(prev, lo) // the first wait is jittered too
	hi := p.Max
	if prev < maxDuration/3 { // else 3·prev wraps
		hi = min(max(3*prev, lo), p.Max)
	}
	if hi <= lo {
		return lo
	}
	return lo + rand.N(hi-lo+1)
}

// Exp is base doubled n times, at most limit (no limit when limit <= 0),
// without jitter: the delays a policy states (a restart after the n-th
// failure). It never overflows.
func Exp(base, limit time.Duration, n int) time.Duration {
	d := base
	for range n {
		if limit > 0 && d >= limit || d > maxDuration/2 {
			break
		}
		d *= 2
	}
	if limit > 0 && d > limit {
		d = limit
	}
	return d
}

const maxDuration = time.Duration(1<<63 - 1)
