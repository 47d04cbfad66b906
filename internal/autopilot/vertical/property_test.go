package vertical

import (
	"math"
	"testing"

	"pgregory.net/rapid"
)

// TestPropertyBoundsAndBreaches: whatever the usage, every recommendation
// is within [minAllowed, maxAllowed], a breach always raises the next
// recommendation above the limit that was breached (unless that limit was
// maxAllowed already), and the same samples give the same answers.
func TestPropertyBoundsAndBreaches(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		minA := rapid.Float64Range(0, 0.5).Draw(t, "minAllowed")
		maxA := minA + rapid.Float64Range(0.01, 2).Draw(t, "span")
		if rapid.Bool().Draw(t, "unbounded") {
			minA, maxA = 0, 0
		}
		cfg := Config{MinAllowed: minA, MaxAllowed: maxA}
		a, err := NewTask(cfg)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := NewTask(cfg)
		n := rapid.IntRange(30, 400).Draw(t, "samples")
		now := int64(0)
		for i := 0; i < n; i++ {
			now += int64(rapid.IntRange(1, 600).Draw(t, "gap"))
			usage := rapid.Float64Range(0, 3).Draw(t, "usage")
			ra, rb := a.Recommend(now), b.Recommend(now)
			if ra != rb {
				t.Fatalf("same history, different answers: %+v vs %+v", ra, rb)
			}
			s := Sample{Time: now, Usage: usage}
			if ra.Ready {
				if ra.Limit < minA-1e-12 || (maxA > 0 && ra.Limit > maxA+1e-12) {
					t.Fatalf("limit %v outside [%v, %v]", ra.Limit, minA, maxA)
				}
				if usage > ra.Limit {
					s.OOMKilled, s.Limit = true, ra.Limit
				}
			}
			if err := a.Observe(s); err != nil {
				t.Fatal(err)
			}
			if err := b.Observe(s); err != nil {
				t.Fatal(err)
			}
			if s.OOMKilled {
				next := a.Recommend(now)
				atMax := maxA > 0 && s.Limit >= maxA-1e-12
				if !atMax && next.Limit <= s.Limit {
					t.Fatalf("breach of %v at usage %v: next limit %v did not rise", s.Limit, usage, next.Limit)
				}
				if atMax && next.Limit != maxA {
					t.Fatalf("killed at maxAllowed %v: next %v, want it held there", maxA, next.Limit)
				}
				if math.IsNaN(next.Limit) {
					t.Fatal("NaN limit")
				}
			}
		}
	})
}
