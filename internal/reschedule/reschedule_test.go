package reschedule

import (
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/strata-dev/strata/api"
)

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func policy(attempts int, interval time.Duration, fn string) api.ReschedulePolicy {
	return api.ReschedulePolicy{Attempts: attempts, Interval: interval, Delay: 5 * time.Second, DelayFunction: fn, MaxDelay: time.Minute}
}

func TestDelayFunctions(t *testing.T) {
	tests := []struct {
		fn   string
		want []time.Duration // n = 0, 1, 2, ...
	}{
		{api.DelayConstant, []time.Duration{5e9, 5e9, 5e9, 5e9}},
		{api.DelayExponential, []time.Duration{5e9, 10e9, 20e9, 40e9, 60e9, 60e9}},
		{api.DelayFibonacci, []time.Duration{5e9, 5e9, 10e9, 15e9, 25e9, 40e9, 60e9, 60e9}},
	}
	for _, tt := range tests {
		t.Run(tt.fn, func(t *testing.T) {
			p := policy(3, time.Hour, tt.fn)
			for n, want := range tt.want {
				if got := Delay(p, n); got != want {
					t.Errorf("Delay(n=%d) = %s, want %s", n, got, want)
				}
			}
		})
	}
}

func TestDecide(t *testing.T) {
	failed := t0
	tests := []struct {
		name     string
		p        api.ReschedulePolicy
		mode     string
		previous []time.Time
		now      time.Time
		want     Verdict
	}{
		{"first failure waits the delay", policy(3, time.Hour, api.DelayExponential), "on-failure", nil, t0,
			Verdict{Replace: true, At: t0.Add(5 * time.Second), Delay: 5 * time.Second}},
		{"third failure waits longer", policy(3, time.Hour, api.DelayExponential), "on-failure",
			[]time.Time{t0.Add(-time.Minute), t0.Add(-2 * time.Minute)}, t0,
			Verdict{Replace: true, At: t0.Add(20 * time.Second), Delay: 20 * time.Second}},
		{"attempts exhausted within the interval", policy(3, time.Hour, api.DelayConstant), "on-failure",
			[]time.Time{t0.Add(-time.Minute), t0.Add(-2 * time.Minute), t0.Add(-3 * time.Minute)}, t0,
			Verdict{Dead: "reschedule attempts exhausted: 3 in 1h"}},
		{"failures older than the interval do not count", policy(3, time.Hour, api.DelayConstant), "on-failure",
			[]time.Time{t0.Add(-2 * time.Hour), t0.Add(-time.Minute), t0.Add(-3 * time.Hour)}, t0,
			Verdict{Replace: true, At: t0.Add(5 * time.Second), Delay: 5 * time.Second}},
		{"restart never and no reschedule", api.DefaultReschedulePolicy(api.RestartNever), api.RestartNever, nil, t0,
			Verdict{Dead: "restartPolicy never and reschedule disabled"}},
		{"disabled", api.ReschedulePolicy{}, "always", nil, t0, Verdict{Dead: "reschedule disabled"}},
		{"unlimited ignores attempts", api.ReschedulePolicy{Unlimited: true, Delay: time.Second, DelayFunction: api.DelayConstant, MaxDelay: time.Second},
			"always", []time.Time{t0, t0, t0, t0, t0}, t0, Verdict{Replace: true, At: t0.Add(time.Second), Delay: time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Decide(tt.p, tt.mode, failed, tt.previous, tt.now); got != tt.want {
				t.Fatalf("Decide = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestDelayBounded: whatever the policy and count, the delay stays within
// [delay, max(delay, maxDelay)] and never shrinks as n grows.
func TestDelayBounded(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := api.ReschedulePolicy{
			Delay:         time.Duration(rapid.Int64Range(1, int64(168*time.Hour)).Draw(t, "delay")),
			MaxDelay:      time.Duration(rapid.Int64Range(0, int64(168*time.Hour)).Draw(t, "max")),
			DelayFunction: rapid.SampledFrom([]string{api.DelayConstant, api.DelayExponential, api.DelayFibonacci}).Draw(t, "fn"),
		}
		n := rapid.IntRange(0, 10_000).Draw(t, "n")
		d, next := Delay(p, n), Delay(p, n+1)
		if d < p.Delay || d > max(p.Delay, p.MaxDelay) {
			t.Fatalf("Delay(%d) = %s outside [%s, %s]", n, d, p.Delay, max(p.Delay, p.MaxDelay))
		}
		if next < d {
			t.Fatalf("Delay(%d) = %s < Delay(%d) = %s", n+1, next, n, d)
		}
	})
}

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{time.Hour: "1h", 24 * time.Hour: "24h", 30 * time.Minute: "30m", 90 * time.Minute: "1h30m", 45 * time.Second: "45s"} {
		if got := FormatDuration(d); got != want {
			t.Errorf("FormatDuration(%s) = %q, want %q", d, got, want)
		}
	}
}
