package gpushare

import (
	"errors"
	"strings"
	"testing"
)

// duty is n samples: share of them at high, the rest at low.
func duty(n int, low, high float64, share float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = low
		if float64(i) < share*float64(n) {
			out[i] = high
		}
	}
	return out
}

func TestRecommend(t *testing.T) {
	cases := []struct {
		name   string
		duty   []float64
		ready  bool
		milli  int64
		bound  string
		reason string
	}{
		{"the GenAI median: p95 27 %", duty(1440, 0.05, 0.27, 0.3), true, 350, "", "p95 duty cycle 27.0%"},
		{"idle on its GPU: the minimum", duty(1440, 0, 0, 0), true, 100, "minMilli", "held at minMilli"},
		{"busy: a whole GPU", duty(1440, 0.9, 0.95, 0.5), true, 1000, "maxMilli", "held at maxMilli"},
		{"exact steps are not rounded up", duty(100, 0.25, 0.25, 0), true, 300, "", "300 milli"},
		{"too few samples", duty(10, 0.2, 0.2, 0), false, 0, "", "warming up: 10 of the 60"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := Recommend(Config{}, c.duty)
			if err != nil {
				t.Fatal(err)
			}
			if r.Ready != c.ready || r.Milli != c.milli || r.Bound != c.bound || !strings.Contains(r.Reason, c.reason) {
				t.Fatalf("got %+v, want ready %v, %d milli, bound %q, reason with %q", r, c.ready, c.milli, c.bound, c.reason)
			}
		})
	}
}

func TestRecommendRejects(t *testing.T) {
	if _, err := Recommend(Config{}, duty(100, 27, 27, 0)); err == nil || !strings.Contains(err.Error(), "percentage must be divided by 100") {
		t.Errorf("percent input: %v, want an error that says to divide by 100", err)
	}
	if _, err := Recommend(Config{MinMilli: 600, MaxMilli: 500}, duty(100, 0.2, 0.2, 0)); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "minMilli") {
		t.Errorf("contradicting bounds: %v, want ErrConfig naming minMilli", err)
	}
}
