package backoff

import (
	"testing"
	"time"

	"pgregory.net/rapid"
)

// TestNextStaysWithinItsBounds: every wait is within [Base, Max] and at
// most three times the previous one (but never below Base), whatever the
// previous wait, overflowing ones included.
func TestNextStaysWithinItsBounds(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		base := time.Duration(rapid.Int64Range(1, int64(time.Minute)).Draw(t, "base"))
		limit := base + time.Duration(rapid.Int64Range(0, int64(time.Hour)).Draw(t, "spread"))
		prev := time.Duration(rapid.Int64Range(0, 1<<63-1).Draw(t, "prev"))
		p := Policy{Base: base, Max: limit}
		d := p.Next(prev)
		if d < base || d > limit {
			t.Fatalf("Next(%v) = %v, outside [%v, %v]", prev, d, base, limit)
		}
		if prev < limit/3 && d > 3*max(prev, base) {
			t.Fatalf("Next(%v) = %v, more than three times the last", prev, d)
		}
	})
}

// TestNextSpreadsAndGrows: callers that start together spread at once,
// and the waits grow toward Max.
func TestNextSpreadsAndGrows(t *testing.T) {
	p := Policy{Base: 100 * time.Millisecond, Max: 5 * time.Second}
	seen := map[time.Duration]bool{}
	var total time.Duration
	for range 100 {
		d := p.Next(0)
		d = p.Next(d)
		seen[d] = true
		for range 20 {
			d = p.Next(d)
		}
		total += d
	}
	if len(seen) < 50 {
		t.Fatalf("100 callers' second waits take %d values", len(seen))
	}
	if mean := total / 100; mean < time.Second {
		t.Fatalf("after 22 retries the mean wait is %v: the waits do not grow toward %v", mean, p.Max)
	}
}

func TestExp(t *testing.T) {
	for _, tc := range []struct {
		base, limit time.Duration
		n           int
		want        time.Duration
	}{
		{time.Second, 0, 0, time.Second},
		{time.Second, 0, 3, 8 * time.Second},
		{time.Second, 5 * time.Second, 3, 5 * time.Second},
		{time.Second, 5 * time.Second, 100, 5 * time.Second},
		{0, time.Minute, 10, 0},
		{time.Second, 0, 1000, time.Duration(1<<62) / time.Second * time.Second},
	} {
		got := Exp(tc.base, tc.limit, tc.n)
		if tc.n == 1000 {
			if got <= 0 || got < time.Duration(1<<61) {
				t.Errorf("Exp(%v, %v, %d) = %v: overflowed or stopped early", tc.base, tc.limit, tc.n, got)
			}
			continue
		}
		if got != tc.want {
			t.Errorf("Exp(%v, %v, %d) = %v, want %v", tc.base, tc.limit, tc.n, got, tc.want)
		}
	}
}
