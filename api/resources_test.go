package api

import (
	"math"
	"math/big"
	"testing"

	"pgregory.net/rapid"
)

// extremeInt64 draws mostly from the edges of int64, where wrapping hides.
func extremeInt64() *rapid.Generator[int64] {
	return rapid.OneOf(
		rapid.Int64(),
		rapid.SampledFrom([]int64{0, 1, -1, math.MaxInt64, math.MaxInt64 - 1, math.MinInt64, math.MinInt64 + 1, math.MaxInt64 / 2, math.MaxInt64/2 + 1}),
		rapid.Int64Range(-1000, 1000),
	)
}

func clamp(b *big.Int) int64 {
	switch {
	case b.Cmp(big.NewInt(math.MaxInt64)) > 0:
		return math.MaxInt64
	case b.Cmp(big.NewInt(math.MinInt64)) < 0:
		return math.MinInt64
	}
	return b.Int64()
}

// TestResourceArithmeticNeverWraps: Add and Sub are the exact sum clamped
// to int64; AddChecked is exact or says it is not.
func TestResourceArithmeticNeverWraps(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a, b := extremeInt64().Draw(t, "a"), extremeInt64().Draw(t, "b")
		sum := new(big.Int).Add(big.NewInt(a), big.NewInt(b))
		diff := new(big.Int).Sub(big.NewInt(a), big.NewInt(b))
		r, o := Resources{CPUMilli: a, NetMbps: a}, Resources{CPUMilli: b, NetMbps: b}
		if got := r.Add(o).CPUMilli; got != clamp(sum) {
			t.Fatalf("%d + %d = %d, want %d", a, b, got, clamp(sum))
		}
		if got := r.Sub(o).NetMbps; got != clamp(diff) {
			t.Fatalf("%d - %d = %d, want %d", a, b, got, clamp(diff))
		}
		checked, ok := r.AddChecked(o)
		if ok != sum.IsInt64() || (ok && checked.CPUMilli != sum.Int64()) {
			t.Fatalf("AddChecked(%d, %d) = %d, %v; exact sum %s", a, b, checked.CPUMilli, ok, sum)
		}
	})
}

// The group: two tasks of math.MaxInt64 millicores must not ask
// for -2 (issue 7, defect 3).
func TestGroupResourcesSaturate(t *testing.T) {
	huge := Resources{CPUMilli: math.MaxInt64, MemoryBytes: math.MaxInt64}
	g := &TaskGroup{Tasks: []*Task{{Resources: huge}, {Resources: huge}}}
	if got := g.Resources(); got.CPUMilli != math.MaxInt64 || got.MemoryBytes != math.MaxInt64 {
		t.Fatalf("group resources %+v, want saturated", got)
	}
	if dim := g.Resources().Exceeds(Resources{CPUMilli: 4000, MemoryBytes: 8 << 30}); dim != "cpu" {
		t.Fatalf("saturated request fits a 4-core node (%q)", dim)
	}
	if _, ok := huge.AddChecked(huge); ok {
		t.Fatal("AddChecked accepted an overflowing sum")
	}
	if dim := (Resources{GPUs: -1}).Negative(); dim != "gpu" {
		t.Fatalf("Negative = %q", dim)
	}
}

func TestWholeCores(t *testing.T) {
	for _, tt := range []struct{ milli, cores, rounded int64 }{
		{0, 0, 0}, {1, 1, 1000}, {1000, 1, 1000}, {1500, 2, 2000},
		{math.MaxInt64, math.MaxInt64/1000 + 1, math.MaxInt64},
		{math.MaxInt64 - 500, math.MaxInt64/1000 + 1, math.MaxInt64},
	} {
		if c, r := WholeCores(tt.milli); c != tt.cores || r != tt.rounded {
			t.Errorf("WholeCores(%d) = %d, %d; want %d, %d", tt.milli, c, r, tt.cores, tt.rounded)
		}
	}
}
