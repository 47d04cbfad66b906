package reschedule

import (
	"fmt"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/backoff"
)

// Verdict is what happens to a replica whose newest allocation failed.
type Verdict struct {
	// Replace is true when a replacement is placed, at At (which may be
	// after now: the caller asks for a follow-up evaluation then).
	Replace bool
	At      time.Time
	// Delay is the wait between the failure and At.
	Delay time.Duration
	// Dead says why no replacement is placed, e.g.
	// "reschedule attempts exhausted: 3 in 1h0m0s".
	Dead string
}

// Decide rules on a failed allocation. failedAt is when it failed;
// previous holds the failure times of the replica's earlier failed
// allocations that were replaced (same workload version), newest first
// or in any order. restartMode words the reason when rescheduling is off.
func Decide(p api.ReschedulePolicy, restartMode string, failedAt time.Time, previous []time.Time, now time.Time) Verdict {
	if p.Disabled() {
		if restartMode == api.RestartNever {
			return Verdict{Dead: "restartPolicy never and reschedule disabled"}
		}
		return Verdict{Dead: "reschedule disabled"}
	}
	n := len(previous)
	if !p.Unlimited {
		// Only replacements within the interval count against attempts.
		n = 0
		for _, t := range previous {
			if t.IsZero() || now.Sub(t) < p.Interval { // an untimed failure counts: the safe side
				n++
			}
		}
		if n >= p.Attempts {
			return Verdict{Dead: fmt.Sprintf("reschedule attempts exhausted: %d in %s", p.Attempts, FormatDuration(p.Interval))}
		}
	}
	d := Delay(p, n)
	at := failedAt.Add(d)
	if failedAt.IsZero() {
		at = now.Add(d) // stored before failures were timed: wait from now
	}
	return Verdict{Replace: true, At: at, Delay: d}
}

// Delay is the wait before replacement number n+1 (n earlier replacements
// counted), per the policy's delay function, capped at MaxDelay. It never
// overflows: growth stops at the cap.
func Delay(p api.ReschedulePolicy, n int) time.Duration {
	d := p.Delay
	limit := p.MaxDelay
	if limit < d {
		limit = d
	}
	switch p.DelayFunction {
	case api.DelayExponential:
		d = backoff.Exp(d, limit, n)
	case api.DelayFibonacci:
		prev := time.Duration(0)
		for i := 0; i < n && d < limit; i++ {
			if i == 0 {
				prev = d // delay, delay, 2·delay, 3·delay, …
				continue
			}
			prev, d = d, d+prev
		}
	}
	return min(d, limit)
}

// FormatDuration prints whole hours and minutes the way people write them
// (1h, 30m, 1h30m, 45s) rather than Go's 1h0m0s.
func FormatDuration(d time.Duration) string {
	switch {
	case d >= time.Hour && d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d >= time.Minute && d%time.Minute == 0:
		if d >= time.Hour {
			return fmt.Sprintf("%dh%dm", d/time.Hour, d%time.Hour/time.Minute)
		}
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return d.String()
}
